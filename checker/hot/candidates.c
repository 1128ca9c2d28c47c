#include "hot.h"

/* -- candidates: every record of some domains (checker.values.every) ----------------------- */

/* The exception set now, as an object with its traceback (the caller raises it again). */
static PyObject *
caught(void)
{
    PyObject *type, *value, *tb;
    PyErr_Fetch(&type, &value, &tb);
    PyErr_NormalizeException(&type, &value, &tb);
    if (tb != NULL && value != NULL)
        PyException_SetTraceback(value, tb);
    Py_XDECREF(type);
    Py_XDECREF(tb);
    if (value == NULL)
        value = Py_NewRef(Py_None);
    return value;
}

/* candidates(shape, domains, slots, start, stop, where, picked): the candidates `start` to
 * `stop - 1` of the product of `domains` (tuples of frozen values, the first varying
 * slowest), each the record of `shape` whose item slots[i] is a value of domains[i]; the
 * k-th is candidate number k, or picked[k] (int64) given `picked`. Those for which `where`
 * (None: all) is true: (records, their numbers as int64 bytes, None, None); if `where`
 * raises on one (or its truth does), the records before it, their numbers, its number and
 * the exception. */
PyObject *
hot_candidates(PyObject *module, PyObject *const *args, Py_ssize_t nargs)
{
    if (nargs != 7 || !PyType_Check(args[0]) || !PyTuple_Check(args[1]) ||
        !PyTuple_Check(args[2]) || PyTuple_GET_SIZE(args[1]) != PyTuple_GET_SIZE(args[2])) {
        PyErr_SetString(PyExc_TypeError,
                        "candidates(shape, domains, slots, start, stop, where, picked)");
        return NULL;
    }
    PyTypeObject *shape = (PyTypeObject *)args[0];
    PyObject *domains = args[1], *where = args[5] == Py_None ? NULL : args[5];
    Py_ssize_t n = PyTuple_GET_SIZE(domains);
    Py_ssize_t start = PyLong_AsSsize_t(args[3]), stop = PyLong_AsSsize_t(args[4]);
    if ((start == -1 || stop == -1) && PyErr_Occurred())
        return NULL;
    Py_ssize_t sizes[64], slots[64];
    if (n > 64) {
        PyErr_SetString(PyExc_ValueError, "candidates: at most 64 domains");
        return NULL;
    }
    for (Py_ssize_t i = 0; i < n; i++) {
        PyObject *domain = PyTuple_GET_ITEM(domains, i);
        if (!PyTuple_Check(domain)) {
            PyErr_SetString(PyExc_TypeError, "candidates: each domain is a tuple");
            return NULL;
        }
        sizes[i] = PyTuple_GET_SIZE(domain);
        slots[i] = PyLong_AsSsize_t(PyTuple_GET_ITEM(args[2], i));
        if (slots[i] == -1 && PyErr_Occurred())
            return NULL;
        if (sizes[i] == 0)
            stop = start; /* an empty domain: no candidate */
    }
    Py_buffer picked = {0};
    if (args[6] != Py_None) {
        if (PyObject_GetBuffer(args[6], &picked, PyBUF_SIMPLE) < 0)
            return NULL;
        if (stop > (Py_ssize_t)(picked.len / sizeof(int64_t)) || start < 0) {
            PyBuffer_Release(&picked);
            PyErr_SetString(PyExc_IndexError, "candidates: beyond the picked numbers");
            return NULL;
        }
    }
    const int64_t *chosen = picked.buf;
    Py_ssize_t count = stop > start ? stop - start : 0;
    PyObject *records = PyList_New(0);
    PyObject *numbers = PyBytes_FromStringAndSize(NULL, count * (Py_ssize_t)sizeof(int64_t));
    PyObject *failed = NULL, *error = NULL;
    if (records == NULL || numbers == NULL)
        goto fail;
    int64_t *out = (int64_t *)PyBytes_AS_STRING(numbers);
    Py_ssize_t kept = 0;
    for (Py_ssize_t k = start; k < stop; k++) {
        if (((k - start) & 4095) == 4095 && PyErr_CheckSignals() < 0)
            goto fail;
        int64_t number = chosen != NULL ? chosen[k] : (int64_t)k;
        if (number < 0) {
            PyErr_SetString(PyExc_ValueError, "candidates: a negative number");
            goto fail;
        }
        PyObject *record = shaped(shape, n);
        if (record == NULL)
            goto fail;
        int64_t rest = number;
        for (Py_ssize_t i = n - 1; i >= 0; i--) {
            PyObject *value = PyTuple_GET_ITEM(PyTuple_GET_ITEM(domains, i), rest % sizes[i]);
            rest /= sizes[i];
            PyTuple_SET_ITEM(record, slots[i], Py_NewRef(value));
        }
        int keep = 1;
        if (where != NULL) {
            PyObject *verdict = PyObject_CallOneArg(where, record);
            keep = verdict == NULL ? -1 : PyObject_IsTrue(verdict);
            Py_XDECREF(verdict);
        }
        if (keep < 0) {
            Py_DECREF(record);
            failed = PyLong_FromLongLong(number);
            error = caught();
            if (failed == NULL)
                goto fail;
            break;
        }
        if (keep) {
            out[kept++] = number;
            int appended = PyList_Append(records, record);
            Py_DECREF(record);
            if (appended < 0)
                goto fail;
        }
        else
            Py_DECREF(record);
    }
    if (picked.buf != NULL)
        PyBuffer_Release(&picked);
    if (_PyBytes_Resize(&numbers, kept * (Py_ssize_t)sizeof(int64_t)) < 0) {
        Py_DECREF(records);
        Py_XDECREF(failed);
        Py_XDECREF(error);
        return NULL;
    }
    if (failed == NULL)
        return Py_BuildValue("(NNOO)", records, numbers, Py_None, Py_None);
    return Py_BuildValue("(NNNN)", records, numbers, failed, error);
fail:
    if (picked.buf != NULL)
        PyBuffer_Release(&picked);
    Py_XDECREF(records);
    Py_XDECREF(numbers);
    Py_XDECREF(failed);
    Py_XDECREF(error);
    return NULL;
}
