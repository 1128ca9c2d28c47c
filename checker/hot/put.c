/* put.c: put, a container with one key's value set (an existing key's in place of its old
 * value; a key added to a Map in canonical order), update, TLA+'s EXCEPT with @ along a path
 * (one put per key), and without's Maps (keys removed). Their twins are put_python,
 * update_python and without_python in checker.values.record; the same values and errors.
 *
 * A Map's keys are in canonical order (checker.values.encoding.canonical_order): natural when
 * every key is an int, else that of the keys' encodings. A key added or removed that could
 * change the kind of order or make the result a shape (only strings, bools, ints becoming
 * mixed, no key left) is left to the twins. */

#include "hot.h"

enum { ORDER_NONE = -1, ORDER_INTS = 0, ORDER_ENCODED = 1 };

/* How the keys of `keys` (and `extra`, if not NULL; `skip`[i] set: leave key i out) are
 * ordered: ints by value, anything with a key that is no int, bool or str by encodings
 * (such a key keeps the result a Map), else ORDER_NONE. */
static int
order_of(PyObject *keys, PyObject *extra, const char *skip)
{
    int ints = 1, encoded = 0;
    Py_ssize_t n = PyTuple_GET_SIZE(keys);
    for (Py_ssize_t i = -1; i < n; i++) {
        PyObject *key = i < 0 ? extra : PyTuple_GET_ITEM(keys, i);
        if (key == NULL || (i >= 0 && skip != NULL && skip[i]))
            continue;
        PyTypeObject *type = Py_TYPE(key);
        if (type != &PyLong_Type) {
            ints = 0;
            if (type != &PyBool_Type && type != &PyUnicode_Type)
                encoded = 1;
        }
    }
    return encoded ? ORDER_ENCODED : ints ? ORDER_INTS : ORDER_NONE;
}

/* -1, 0 or 1 as bytes a < b, ==, > (Python's order of bytes); -2 with an exception. */
static int
compare_encodings(PyObject *a, PyObject *b)
{
    PyObject *x = hot_encode(NULL, a);
    if (x == NULL)
        return -2;
    PyObject *y = hot_encode(NULL, b);
    if (y == NULL) {
        Py_DECREF(x);
        return -2;
    }
    Py_ssize_t nx = PyBytes_GET_SIZE(x), ny = PyBytes_GET_SIZE(y);
    int c = memcmp(PyBytes_AS_STRING(x), PyBytes_AS_STRING(y), nx < ny ? nx : ny);
    Py_DECREF(x);
    Py_DECREF(y);
    return c < 0 ? -1 : c > 0 ? 1 : nx < ny ? -1 : nx > ny ? 1 : 0;
}

/* `map` (a Map without `key`, or the empty record: a bag's first message) with `key` set to
 * `value`: a new reference, or NULL with an exception, or NULL without one when the twin is
 * to build it. */
static PyObject *
map_with_key(PyObject *map, PyObject *key, PyObject *value)
{
    static PyObject *none; /* the empty record's keys and values */
    if (none == NULL && (none = PyTuple_New(0)) == NULL)
        return NULL;
    int empty = !is_map(map);
    PyObject *keys = empty ? none : PyTuple_GET_ITEM(map, 1);
    PyObject *values = empty ? none : PyTuple_GET_ITEM(map, 2);
    PyObject *item = frozen(value, FROZEN); /* (first, as the twin: the same error first) */
    if (item == NULL)
        return NULL;
    PyObject *new_key = freeze_value(key);
    if (new_key == NULL) {
        Py_DECREF(item);
        return NULL;
    }
    int order = order_of(keys, empty ? new_key : NULL, NULL);
    /* A key frozen into another object may equal a key there (a list for a tuple): the twin. */
    if (new_key != key || order == ORDER_NONE || order_of(keys, new_key, NULL) != order) {
        Py_DECREF(new_key);
        Py_DECREF(item);
        return NULL;
    }
    Py_ssize_t n = PyTuple_GET_SIZE(keys), low = 0, high = n;
    while (low < high) { /* the first key after new_key */
        Py_ssize_t mid = (low + high) / 2;
        PyObject *there = PyTuple_GET_ITEM(keys, mid);
        int before = order == ORDER_INTS ? PyObject_RichCompareBool(new_key, there, Py_LT)
                                         : compare_encodings(new_key, there);
        if (before == -2 || (order == ORDER_INTS && before < 0)) {
            Py_DECREF(new_key);
            Py_DECREF(item);
            return NULL;
        }
        if (order == ORDER_INTS ? before : before < 0)
            high = mid;
        else
            low = mid + 1;
    }
    PyObject *new_keys = PyTuple_New(n + 1), *new_values = PyTuple_New(n + 1);
    PyObject *result = new_keys && new_values ? shaped(MAP, 2) : NULL;
    if (result == NULL) {
        Py_XDECREF(new_keys);
        Py_XDECREF(new_values);
        Py_DECREF(new_key);
        Py_DECREF(item);
        return NULL;
    }
    for (Py_ssize_t i = 0, j = 0; i <= n; i++) {
        if (i == low) {
            PyTuple_SET_ITEM(new_keys, i, new_key);
            PyTuple_SET_ITEM(new_values, i, item);
            continue;
        }
        PyTuple_SET_ITEM(new_keys, i, Py_NewRef(PyTuple_GET_ITEM(keys, j)));
        PyTuple_SET_ITEM(new_values, i, Py_NewRef(PyTuple_GET_ITEM(values, j)));
        j++;
    }
    PyTuple_SET_ITEM(result, 1, new_keys);
    PyTuple_SET_ITEM(result, 2, new_values);
    return result;
}

/* `map` without the keys equal to one of `drop[0..ndrop)`: a new reference (`map` itself if
 * none is there), or NULL with an exception, or NULL without one when the twin is to. */
PyObject *
map_without(PyObject *map, PyObject *const *drop, Py_ssize_t ndrop)
{
    PyObject *keys = PyTuple_GET_ITEM(map, 1), *values = PyTuple_GET_ITEM(map, 2);
    Py_ssize_t n = PyTuple_GET_SIZE(keys), kept = n;
    char small[64], *skip = n <= 64 ? small : PyMem_Malloc(n);
    if (skip == NULL)
        return PyErr_NoMemory();
    PyObject *result = NULL;
    for (Py_ssize_t i = 0; i < n; i++) {
        skip[i] = 0;
        for (Py_ssize_t d = 0; d < ndrop && !skip[i]; d++) {
            int same = PyObject_RichCompareBool(PyTuple_GET_ITEM(keys, i), drop[d], Py_EQ);
            if (same < 0)
                goto done;
            skip[i] = (char)same;
        }
        kept -= skip[i];
    }
    int order = order_of(keys, NULL, NULL);
    if (kept == 0 || order == ORDER_NONE || order_of(keys, NULL, skip) != order)
        goto done; /* (the twin's) */
    if (kept == n) { /* the twin builds an equal Map anew; this one is immutable */
        result = Py_NewRef(map);
        goto done;
    }
    PyObject *new_keys = PyTuple_New(kept), *new_values = PyTuple_New(kept);
    result = new_keys && new_values ? shaped(Py_TYPE(map), 2) : NULL;
    if (result == NULL) {
        Py_XDECREF(new_keys);
        Py_XDECREF(new_values);
        goto done;
    }
    for (Py_ssize_t i = 0, j = 0; i < n; i++) {
        if (skip[i])
            continue;
        PyTuple_SET_ITEM(new_keys, j, Py_NewRef(PyTuple_GET_ITEM(keys, i)));
        PyTuple_SET_ITEM(new_values, j, Py_NewRef(PyTuple_GET_ITEM(values, i)));
        j++;
    }
    PyTuple_SET_ITEM(result, 1, new_keys);
    PyTuple_SET_ITEM(result, 2, new_values);
done:
    if (skip != small)
        PyMem_Free(skip);
    return result;
}

/* The position in `record`'s tuple of its value for `key` (for a Map: in its values), or -1
 * if it has no such key (without an exception), or -2 with an exception. */
static Py_ssize_t
record_position(PyObject *record, PyObject *key)
{
    if (is_map(record)) {
        PyObject *keys = PyTuple_GET_ITEM(record, 1);
        Py_ssize_t n = PyTuple_GET_SIZE(keys);
        for (Py_ssize_t i = 0; i < n; i++) {
            int same = PyObject_RichCompareBool(PyTuple_GET_ITEM(keys, i), key, Py_EQ);
            if (same < 0)
                return -2;
            if (same)
                return i;
        }
        return -1;
    }
    PyObject *index = _PyType_Lookup(Py_TYPE(record), STR_INDEX); /* borrowed */
    if (index == NULL || !PyDict_Check(index))
        return -1;
    PyObject *position = PyDict_GetItemWithError(index, key); /* borrowed */
    if (position == NULL)
        return PyErr_Occurred() ? -2 : -1;
    return PyLong_AsSsize_t(position);
}

/* A copy of the tuple `items` (of `type`: a tuple or a record shape) with item `at` set to
 * `value` (a new reference, consumed); `items` itself if that item is `value` already. */
static PyObject *
with_item(PyTypeObject *type, PyObject *items, Py_ssize_t at, PyObject *value)
{
    if (PyTuple_GET_ITEM(items, at) == value) {
        Py_DECREF(value);
        Py_INCREF(items);
        return items;
    }
    Py_ssize_t n = PyTuple_GET_SIZE(items);
    PyObject *copy = type == &PyTuple_Type ? PyTuple_New(n) : alloc(type, n);
    if (copy == NULL) {
        Py_DECREF(value);
        return NULL;
    }
    for (Py_ssize_t i = 0; i < n; i++) {
        PyObject *item = i == at ? value : PyTuple_GET_ITEM(items, i);
        if (i != at)
            Py_INCREF(item);
        PyTuple_SET_ITEM(copy, i, item);
    }
    return copy;
}

/* put(container, key, value): a tuple, a record or a Map with one key's value set. */
PyObject *
hot_put(PyObject *module, PyObject *const *args, Py_ssize_t nargs)
{
    if (nargs != 3) {
        PyErr_SetString(PyExc_TypeError, "put(container, key, value)");
        return NULL;
    }
    PyObject *container = args[0], *key = args[1];
    PyTypeObject *type = Py_TYPE(container);
    if (type != &PyTuple_Type && PyType_IsSubtype(type, &RecordBase)) {
        Py_ssize_t at = record_position(container, key);
        if (at == -2) { /* no key it can hold (unhashable): the twin says why, in its order */
            if (!PyErr_ExceptionMatches(PyExc_TypeError))
                return NULL;
            PyErr_Clear();
            return PyObject_Vectorcall(PUT_SLOW, args, 3, NULL);
        }
        if (at < 0) { /* a key added: here to a Map (or the empty record) if its order allows */
            PyObject *made = is_map(container) || PyTuple_GET_SIZE(container) == 1
                                 ? map_with_key(container, key, args[2])
                                 : NULL;
            return made || PyErr_Occurred() ? made : PyObject_Vectorcall(PUT_SLOW, args, 3, NULL);
        }
        PyObject *value = frozen(args[2], FROZEN);
        if (value == NULL)
            return NULL;
        if (!is_map(container))
            return with_item(type, container, at, value);
        PyObject *values = with_item(&PyTuple_Type, PyTuple_GET_ITEM(container, 2), at, value);
        if (values == NULL)
            return NULL;
        if (values == PyTuple_GET_ITEM(container, 2)) { /* the value it holds already */
            Py_DECREF(values);
            Py_INCREF(container);
            return container;
        }
        PyObject *map = shaped(type, 2);
        if (map == NULL) {
            Py_DECREF(values);
            return NULL;
        }
        Py_INCREF(PyTuple_GET_ITEM(container, 1));
        PyTuple_SET_ITEM(map, 1, PyTuple_GET_ITEM(container, 1));
        PyTuple_SET_ITEM(map, 2, values);
        return map;
    }
    if (!PyTuple_CheckExact(container) || !PyLong_CheckExact(key))
        return PyObject_Vectorcall(PUT_SLOW, args, 3, NULL);
    Py_ssize_t n = PyTuple_GET_SIZE(container);
    Py_ssize_t at = PyLong_AsSsize_t(key);
    if (at == -1 && PyErr_Occurred())
        PyErr_Clear();
    if (at < 0 || at >= n) {
        PyErr_Format(PyExc_IndexError, "put(): index %R out of range for a tuple of %zd", key, n);
        return NULL;
    }
    PyObject *value = frozen(args[2], FROZEN);
    if (value == NULL)
        return NULL;
    return with_item(&PyTuple_Type, container, at, value);
}

static PyObject *NEEDS_KEY; /* the TypeError's message for a path without a key */

/* `container` with the value at keys[0..n) replaced by fn(the old value), or NULL. */
static PyObject *
updated(PyObject *container, PyObject *const *keys, Py_ssize_t n, PyObject *fn)
{
    PyObject *key = keys[0];
    PyObject *old = PyObject_GetItem(container, key);
    if (old == NULL) {
        PyObject *type, *value, *traceback;
        PyErr_Fetch(&type, &value, &traceback);
        if (!PyErr_GivenExceptionMatches(type, PyExc_KeyError) &&
            !PyErr_GivenExceptionMatches(type, PyExc_IndexError) &&
            !PyErr_GivenExceptionMatches(type, PyExc_TypeError)) {
            PyErr_Restore(type, value, traceback);
            return NULL;
        }
        /* The exception's own class (as the twin's `type(exc)`), with the path in its text. */
        PyErr_NormalizeException(&type, &value, &traceback);
        Py_XDECREF(traceback);
        PyObject *kind = value != NULL ? (PyObject *)Py_TYPE(value) : type;
        Py_INCREF(kind);
        Py_XDECREF(value);
        Py_XDECREF(type);
        PyObject *message = PyUnicode_FromFormat("update(): no %R in %R", key, container);
        if (message != NULL) {
            PyObject *error = PyObject_CallOneArg(kind, message);
            Py_DECREF(message);
            if (error != NULL) {
                PyErr_SetObject(kind, error);
                Py_DECREF(error);
            }
        }
        Py_DECREF(kind);
        return NULL;
    }
    PyObject *new = n > 1 ? updated(old, keys + 1, n - 1, fn) : PyObject_CallOneArg(fn, old);
    Py_DECREF(old);
    if (new == NULL)
        return NULL;
    PyObject *args[3] = {container, key, new};
    PyObject *result = hot_put(NULL, args, 3);
    Py_DECREF(new);
    return result;
}

PyObject *
hot_update(PyObject *module, PyObject *const *args, Py_ssize_t nargs)
{
    if (nargs < 3) {
        if (NEEDS_KEY == NULL)
            NEEDS_KEY = PyUnicode_InternFromString(
                "update(container, key, ..., fn) needs a key before the function");
        if (NEEDS_KEY != NULL)
            PyErr_SetObject(PyExc_TypeError, NEEDS_KEY);
        return NULL;
    }
    PyObject *fn = args[nargs - 1];
    if (!PyCallable_Check(fn)) {
        PyErr_Format(PyExc_TypeError,
                     "update(): the last argument is a function of the old value, not %R", fn);
        return NULL;
    }
    return updated(args[0], args + 1, nargs - 2, fn);
}
