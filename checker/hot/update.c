/* update(container, *path, fn): TLA+'s EXCEPT with @, `[s EXCEPT !.a[k] = f(@)]`, in C: one
 * put per key of the path, innermost first, with no Python frame but `fn`'s (the twin is
 * checker.values.record.update_python; the same values and errors). */

#include "hot.h"

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
