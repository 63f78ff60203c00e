"""Op cases for string ops and parsing: joins, splits, regexes, hashing, conversions, CSV,
raw bytes, tf.train.Example and SequenceExample."""
import numpy as np

import tensorweave as tf
from tests.op_cases import OpCase, raw

_WORDS = np.array([b"  alpha beta", b"gamma ", b"delta-epsilon zeta", b"xy"], dtype=object)


def _words(rng):
    return [_WORDS]


def _string_ops(s):
    pattern = tf.constant("[a-z]+ .*")
    return [tf.strings.join([s, s], separator="|"), tf.strings.length(s), tf.strings.strip(s),
            tf.strings.substr(s, 1, 3), tf.string_split(s), tf.strings.split(s, sep="-"),
            tf.strings.regex_full_match(s, "[a-z ]+"), tf.strings.regex_replace(s, "a+", "A"),
            raw("RegexFullMatch", s, pattern), raw("RegexReplace", s, pattern, tf.constant("X")),
            tf.string_to_hash_bucket(s, 7), tf.string_to_hash_bucket_fast(s, 7),
            tf.string_to_hash_bucket_strong(s, 7, [3, 5])]


def _conversions(x):
    text = tf.as_string(x, precision=3)
    return [text, tf.as_string(tf.cast(x * 10, tf.int32)), tf.string_to_number(text),
            tf.string_to_number(tf.as_string(tf.cast(x, tf.int64)), out_type=tf.int64)]


def _csv_and_raw():
    records = tf.constant(["1,2.5,a", "4,,b", "7,8.25,"])
    columns = tf.decode_csv(records, [[0], [-1.0], ["zz"]])
    data = tf.constant([np.arange(8, dtype=np.uint8).tobytes(), bytes(range(8, 16))])
    return list(columns) + [tf.decode_raw(data, tf.int16), tf.decode_raw(data, tf.uint8, little_endian=False)]


def _example(i):
    feature = {
        "x": tf.train.Feature(float_list=tf.train.FloatList(value=[i, i + 0.5])),
        "ids": tf.train.Feature(int64_list=tf.train.Int64List(value=list(range(i)))),
        "word": tf.train.Feature(bytes_list=tf.train.BytesList(value=[b"w%d" % i])),
    }
    return tf.train.Example(features=tf.train.Features(feature=feature)).SerializeToString()


def _sequence_example(i):
    steps = [tf.train.Feature(int64_list=tf.train.Int64List(value=[i, k])) for k in range(i + 1)]
    return tf.train.SequenceExample(
        context=tf.train.Features(feature={"label": tf.train.Feature(int64_list=tf.train.Int64List(value=[i]))}),
        feature_lists=tf.train.FeatureLists(feature_list={"steps": tf.train.FeatureList(feature=steps)}),
    ).SerializeToString()


def _parse_examples():
    parsed = tf.parse_example(tf.constant([_example(1), _example(3)]), {
        "x": tf.FixedLenFeature([2], tf.float32), "ids": tf.VarLenFeature(tf.int64),
        "word": tf.FixedLenFeature([], tf.string), "missing": tf.FixedLenFeature([1], tf.int64, default_value=[9])})
    context, sequences = tf.parse_single_sequence_example(
        tf.constant(_sequence_example(2)), context_features={"label": tf.FixedLenFeature([], tf.int64)},
        sequence_features={"steps": tf.FixedLenSequenceFeature([2], tf.int64)})
    return [parsed, context, sequences]


CASES = [
    OpCase("strings:ops", _string_ops, _words,
           ("StringJoin", "StringLength", "StringStrip", "Substr", "StringSplit", "StringSplitV2",
            "StaticRegexFullMatch", "StaticRegexReplace", "RegexFullMatch", "RegexReplace", "StringToHashBucket",
            "StringToHashBucketFast", "StringToHashBucketStrong")),
    OpCase("strings:conversions", _conversions, lambda rng: [rng.randn(2, 3).astype(np.float32)],
           ("AsString", "StringToNumber")),
    OpCase("strings:csv_and_raw", _csv_and_raw, ops=("DecodeCSV", "DecodeRaw"),
           expected=lambda: [np.array([1, 4, 7], np.int32), np.array([2.5, -1.0, 8.25], np.float32),
                             np.array([b"a", b"b", b"zz"], dtype=object),
                             np.array([np.arange(8, dtype=np.uint8).view(np.int16),
                                       np.arange(8, 16, dtype=np.uint8).view(np.int16)]),
                             np.array([np.arange(8), np.arange(8, 16)], np.uint8)]),
    OpCase("strings:parse_example", _parse_examples, ops=("ParseExampleV2", "ParseSequenceExampleV2")),
]
