#include "hot.h"

/* -- kinds: checker.values.kinds.conforms_python, in C ------------------------------------- */

/* The tags of checker.values.kinds (a kind is a tuple (tag, a, b)). */
enum { K_ANY, K_INT, K_BOOL, K_STR, K_BYTES, K_NONE, K_OPTIONAL, K_TUPLE, K_FIXED, K_SET,
       K_RECORD, K_MAP, K_ANYRECORD };


static long
kind_tag(PyObject *kind)
{
    return small_long(PyTuple_GET_ITEM(kind, 0));
}

/* Whether `value` is of `kind`; `old` (or NULL) is the value it replaces, whose parts that
 * `value` still holds (the same objects) are of their kinds already. As kinds.conforms_python:
 * 1 or 0, never an exception. */
int
kind_ok(PyObject *value, PyObject *old, PyObject *kind)
{
    if (value == old)
        return 1;
    switch (kind_tag(kind)) {
    case K_ANY:
        return 1;
    case K_INT:
        return PyLong_CheckExact(value);
    case K_BOOL:
        return PyBool_Check(value);
    case K_STR:
        return PyUnicode_CheckExact(value);
    case K_BYTES:
        return PyBytes_CheckExact(value);
    case K_NONE:
        return value == Py_None;
    case K_OPTIONAL:
        if (value == Py_None)
            return 1;
        return kind_ok(value, old == Py_None ? NULL : old, PyTuple_GET_ITEM(kind, 1));
    case K_TUPLE: {
        if (!PyTuple_CheckExact(value))
            return 0;
        PyObject *inner = PyTuple_GET_ITEM(kind, 1);
        if (kind_tag(inner) == K_ANY)
            return 1;
        Py_ssize_t n = PyTuple_GET_SIZE(value);
        Py_ssize_t m = (old != NULL && PyTuple_CheckExact(old)) ? PyTuple_GET_SIZE(old) : 0;
        for (Py_ssize_t i = 0; i < n; i++) {
            PyObject *item = PyTuple_GET_ITEM(value, i);
            PyObject *before = i < m ? PyTuple_GET_ITEM(old, i) : NULL;
            if (item != before && !kind_ok(item, before, inner))
                return 0;
        }
        return 1;
    }
    case K_RECORD: {
        if ((PyObject *)Py_TYPE(value) != PyTuple_GET_ITEM(kind, 1))
            return 0;
        PyObject *fields = PyTuple_GET_ITEM(kind, 2);
        Py_ssize_t n = PyTuple_GET_SIZE(value);
        if (PyTuple_GET_SIZE(fields) != n)
            return 0;
        int aligned = old != NULL && Py_TYPE(old) == Py_TYPE(value);
        for (Py_ssize_t i = 1; i < n; i++) {
            PyObject *item = PyTuple_GET_ITEM(value, i);
            PyObject *before = aligned ? PyTuple_GET_ITEM(old, i) : NULL;
            if (item != before && !kind_ok(item, before, PyTuple_GET_ITEM(fields, i)))
                return 0;
        }
        return 1;
    }
    case K_SET: {
        if (!PyFrozenSet_CheckExact(value))
            return 0;
        PyObject *inner = PyTuple_GET_ITEM(kind, 1);
        if (kind_tag(inner) == K_ANY)
            return 1;
        PyObject *iterator = PyObject_GetIter(value), *item;
        if (iterator == NULL) {
            PyErr_Clear();
            return 0;
        }
        int fits = 1;
        while (fits && (item = PyIter_Next(iterator)) != NULL) {
            fits = kind_ok(item, NULL, inner);
            Py_DECREF(item);
        }
        Py_DECREF(iterator);
        PyErr_Clear();
        return fits;
    }
    case K_FIXED: {
        PyObject *kinds = PyTuple_GET_ITEM(kind, 1);
        Py_ssize_t n = PyTuple_GET_SIZE(kinds);
        if (!PyTuple_CheckExact(value) || PyTuple_GET_SIZE(value) != n)
            return 0;
        int aligned = old != NULL && PyTuple_CheckExact(old) && PyTuple_GET_SIZE(old) == n;
        for (Py_ssize_t i = 0; i < n; i++) {
            PyObject *item = PyTuple_GET_ITEM(value, i);
            PyObject *before = aligned ? PyTuple_GET_ITEM(old, i) : NULL;
            if (item != before && !kind_ok(item, before, PyTuple_GET_ITEM(kinds, i)))
                return 0;
        }
        return 1;
    }
    case K_MAP: {
        if (Py_TYPE(value) != MAP) {
            /* A record: its keys are names (a dict whose keys are all identifiers is one), a
             * map if its keys may be strs (the empty record: any map). */
            if (!PyObject_TypeCheck(value, &RecordBase))
                return 0;
            Py_ssize_t n = PyTuple_GET_SIZE(value);
            if (n == 1)
                return 1;
            long key_tag = kind_tag(PyTuple_GET_ITEM(kind, 1));
            if (key_tag != K_ANY && key_tag != K_STR)
                return 0;
            PyObject *value_kind = PyTuple_GET_ITEM(kind, 2);
            int aligned = old != NULL && Py_TYPE(old) == Py_TYPE(value);
            for (Py_ssize_t i = 1; i < n; i++) {
                PyObject *item = PyTuple_GET_ITEM(value, i);
                PyObject *before = aligned ? PyTuple_GET_ITEM(old, i) : NULL;
                if (item != before && !kind_ok(item, before, value_kind))
                    return 0;
            }
            return 1;
        }
        PyObject *keys = PyTuple_GET_ITEM(value, 1), *values = PyTuple_GET_ITEM(value, 2);
        int aligned = old != NULL && Py_TYPE(old) == MAP && PyTuple_GET_ITEM(old, 1) == keys;
        if (!aligned) {
            PyObject *key_kind = PyTuple_GET_ITEM(kind, 1);
            for (Py_ssize_t i = 0; i < PyTuple_GET_SIZE(keys); i++) {
                if (!kind_ok(PyTuple_GET_ITEM(keys, i), NULL, key_kind))
                    return 0;
            }
        }
        PyObject *olds = aligned ? PyTuple_GET_ITEM(old, 2) : NULL;
        PyObject *value_kind = PyTuple_GET_ITEM(kind, 2);
        for (Py_ssize_t i = 0; i < PyTuple_GET_SIZE(values); i++) {
            PyObject *item = PyTuple_GET_ITEM(values, i);
            PyObject *before = olds != NULL ? PyTuple_GET_ITEM(olds, i) : NULL;
            if (item != before && !kind_ok(item, before, value_kind))
                return 0;
        }
        return 1;
    }
    case K_ANYRECORD:
        return PyObject_TypeCheck(value, &RecordBase);
    }
    return 0;
}

/* conforms(value, old, kind) -> bool: kinds.conforms_python (old: None-able, see kind_ok;
 * pass the value itself... or any other object when there is none). */
PyObject *
hot_conforms(PyObject *module, PyObject *const *args, Py_ssize_t nargs)
{
    if (nargs != 3 || !PyTuple_Check(args[2])) {
        PyErr_SetString(PyExc_TypeError, "conforms(value, old, kind)");
        return NULL;
    }
    return PyBool_FromLong(kind_ok(args[0], args[1], args[2]));
}

