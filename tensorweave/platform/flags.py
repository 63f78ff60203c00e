"""tf.flags / tf.app.flags: absl's flags, as TF1 routes them. Two differences from absl, as TF's:
FLAGS parses sys.argv the first time a flag's value is read before any explicit parse (absl would
raise UnparsedFlagAccessError), and the DEFINE functions also take TF1's older keyword names
(flag_name, default_value, docstring).

This module is the tf.flags namespace itself (tf.flags is tf.app.flags, one object, as in TF), so
its own helpers have private names."""
import functools as _functools
import logging as _logging
import sys as _sys
from typing import Any as _Any, Callable as _Callable, Iterator as _Iterator

from absl import flags as _absl
from absl.flags import (  # noqa: F401  (the public tf.flags names are absl's)
    ArgumentParser, ArgumentSerializer, BaseListParser, BooleanFlag, BooleanParser, CantOpenFlagFileError,
    CsvListSerializer, DEFINE, DEFINE_alias, DEFINE_enum, DEFINE_enum_class, DEFINE_flag, DEFINE_list,
    DEFINE_multi, DEFINE_multi_enum, DEFINE_multi_enum_class, DEFINE_multi_float, DEFINE_multi_integer,
    DEFINE_multi_string, DEFINE_spaceseplist, DuplicateFlagError, EnumClassFlag, EnumClassListSerializer,
    EnumClassParser, EnumClassSerializer, EnumFlag, EnumParser, Error, Flag, FlagHolder,
    FlagNameConflictsWithMethodError, FlagValues, FloatParser, IllegalFlagValueError, IntegerParser,
    ListParser, ListSerializer, MultiEnumClassFlag, MultiFlag, UnparsedFlagAccessError,
    UnrecognizedFlagError, ValidationError, WhitespaceSeparatedListParser, adopt_module_key_flags,
    declare_key_flag, disclaim_key_flags, doc_to_help, flag_dict_to_args, get_help_width,
    mark_bool_flags_as_mutual_exclusive, mark_flag_as_required, mark_flags_as_mutual_exclusive,
    mark_flags_as_required, multi_flags_validator, override_value, register_multi_flags_validator,
    register_validator, set_default, text_wrap, validator)

from tensorweave._names.missing import module_getattr as _module_getattr

# This module defines flags on its callers' behalf: absl must credit the caller's module with them
# (its key flags, shown by --helpshort), not this one.
disclaim_key_flags()

_RENAMED = {"flag_name": "name", "default_value": "default", "docstring": "help"}


def _accept_old_names(define: _Callable[..., _Any]) -> _Callable[..., _Any]:
    @_functools.wraps(define)
    def wrapper(*args: _Any, **kwargs: _Any) -> _Any:
        old = [k for k in _RENAMED if k in kwargs]
        for k in old:
            kwargs[_RENAMED[k]] = kwargs.pop(k)
        if old:
            _logging.warning("Use of the keyword argument names (flag_name, default_value, docstring) is "
                            "deprecated, please use (name, default, help) instead.")
        return define(*args, **kwargs)
    return wrapper


DEFINE_string = _accept_old_names(_absl.DEFINE_string)
DEFINE_boolean = _accept_old_names(_absl.DEFINE_boolean)
DEFINE_bool = DEFINE_boolean
DEFINE_float = _accept_old_names(_absl.DEFINE_float)
DEFINE_integer = _accept_old_names(_absl.DEFINE_integer)


class _FlagValuesWrapper:
    """absl's FLAGS, except that reading a flag before any parse parses sys.argv first."""

    def __init__(self, flag_values: FlagValues) -> None:
        self.__dict__["__wrapped"] = flag_values

    def __getattribute__(self, name: str) -> _Any:
        if name == "__dict__":
            return super().__getattribute__(name)
        return self.__dict__["__wrapped"].__getattribute__(name)

    def __getattr__(self, name: str) -> _Any:
        wrapped = self.__dict__["__wrapped"]
        if not wrapped.is_parsed():
            wrapped(_sys.argv)
        return wrapped.__getattr__(name)

    def __setattr__(self, name: str, value: _Any) -> None:
        self.__dict__["__wrapped"].__setattr__(name, value)

    def __delattr__(self, name: str) -> None:
        self.__dict__["__wrapped"].__delattr__(name)

    def __dir__(self) -> list[str]:
        return self.__dict__["__wrapped"].__dir__()

    def __getitem__(self, name: str) -> _Any:
        return self.__dict__["__wrapped"].__getitem__(name)

    def __setitem__(self, name: str, flag: _Any) -> None:
        self.__dict__["__wrapped"].__setitem__(name, flag)

    def __len__(self) -> int:
        return self.__dict__["__wrapped"].__len__()

    def __iter__(self) -> _Iterator[str]:
        return self.__dict__["__wrapped"].__iter__()

    def __str__(self) -> str:
        return self.__dict__["__wrapped"].__str__()

    def __call__(self, *args: _Any, **kwargs: _Any) -> _Any:
        return self.__dict__["__wrapped"].__call__(*args, **kwargs)


FLAGS = _FlagValuesWrapper(_absl.FLAGS)

__getattr__ = _module_getattr("flags", __name__)
