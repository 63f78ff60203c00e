"""Op cases for lookup tables: static tables from tensors and from text files, mutable hash
tables (of scalars and of tensors) and dense hash tables, with every table op."""
import os
import tempfile

import numpy as np

import tensorweave as tf
from tests.op_cases import OpCase, raw

_VOCABULARY = os.path.join(tempfile.gettempdir(), f"tw_op_cases_vocabulary_{os.getpid()}.txt")


def _then(before, make):
    with tf.control_dependencies(before if isinstance(before, list) else [before]):
        return make()


def _static_tables(ids):
    pairs = tf.lookup.KeyValueTensorInitializer([1, 2, 3], [10, 20, 30], tf.int32, tf.int32)
    table = tf.lookup.StaticHashTable(pairs, -1)
    with open(_VOCABULARY, "w") as f:
        f.write("emerald\nruby\nopal\n")
    words = tf.lookup.StaticHashTable(tf.lookup.TextFileInitializer(
        _VOCABULARY, tf.string, tf.lookup.TextFileIndex.WHOLE_LINE, tf.int64, tf.lookup.TextFileIndex.LINE_NUMBER), -1)
    # the TF1 initializer op (graphs imported from TF 1.x use it)
    raw_table = raw("HashTableV2", key_dtype=tf.int32, value_dtype=tf.int32)
    filled = raw("InitializeTableV2", raw_table, tf.constant([4]), tf.constant([40]))
    with tf.control_dependencies([filled]):
        found = raw("LookupTableFindV2", raw_table, ids, tf.constant(0))
    return [table.lookup(ids), table.size(), words.lookup(tf.constant(["ruby", "jade"])), list(table.export()), found]


def _mutable_tables(ids):
    table = tf.lookup.experimental.MutableHashTable(tf.int32, tf.float32, -1.0)
    put = table.insert(tf.constant([1, 2, 3]), tf.constant([0.5, 1.5, 2.5]))
    removed = _then(put, lambda: table.remove(tf.constant([2])))
    found = _then(removed, lambda: table.lookup(ids))
    size = _then(removed, table.size)
    imported = _then([found, size], lambda: raw("LookupTableImportV2", table.resource_handle, tf.constant([7]),
                                                tf.constant([7.5])))
    after_import = _then(imported, lambda: table.lookup(tf.constant([7, 1])))
    rows = tf.lookup.experimental.MutableHashTable(tf.string, tf.int64, [0, 0])
    put_rows = rows.insert(tf.constant(["a", "b"]), tf.constant([[1, 2], [3, 4]], tf.int64))
    got_rows = _then(put_rows, lambda: rows.lookup(tf.constant(["b", "z"])))
    dense = tf.lookup.experimental.DenseHashTable(tf.int64, tf.float32, default_value=-1.0, empty_key=0,
                                                  deleted_key=-1)
    put_dense = dense.insert(tf.constant([5, 6], tf.int64), tf.constant([1.0, 2.0]))
    got_dense = _then(put_dense, lambda: dense.lookup(tf.constant([6, 9], tf.int64)))
    return [found, size, after_import, got_rows, got_dense]


CASES = [
    OpCase("lookup:static_tables", _static_tables, lambda rng: [np.array([3, 1, 5], np.int32)],
           ("HashTableV2", "InitializeTableV2", "InitializeTableFromTextFileV2", "LookupTableFindV2",
            "LookupTableSizeV2", "LookupTableExportV2"),
           expected=lambda ids: [np.array([30, 10, -1], np.int32), np.int64(3), np.array([1, -1], np.int64),
                                 np.array([1, 2, 3], np.int32), np.array([10, 20, 30], np.int32),
                                 np.array([0, 0, 0], np.int32)]),
    OpCase("lookup:mutable_tables", _mutable_tables, lambda rng: [np.array([3, 2, 1, 4], np.int32)],
           ("MutableHashTableV2", "MutableHashTableOfTensorsV2", "MutableDenseHashTableV2", "LookupTableInsertV2",
            "LookupTableRemoveV2", "LookupTableImportV2")),
]
