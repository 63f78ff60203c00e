"""Readers (white paper 4.5): the reader ops and TF1 reader classes (reader_ops) and the reader
state kept in resource managers (reader_resource).

The family's public names (TF's io_ops reader classes) are re-exported here."""
from tensorweave.ops.readers.reader_ops import (
    FixedLengthRecordReader, IdentityReader, ReaderBase, TextLineReader, TFRecordReader, WholeFileReader)

__all__ = ["ReaderBase", "TextLineReader", "FixedLengthRecordReader", "WholeFileReader",
           "TFRecordReader", "IdentityReader"]
