#include "hot.h"

/* What the engine notes while spec code runs (hot.h). */
HOT_SHARED PyTypeObject *TRACKED;
HOT_SHARED uint64_t READS;

/* holds() on one state: -1, the first predicate that did not hold, or -2 on Ctrl-C (or the
 * spec's own KeyboardInterrupt), raised. `masks`: 8 bytes per predicate. */
static Py_ssize_t
holds_core(PyObject *predicates, PyObject *state, const char *before, uint64_t changed,
           char *masks)
{
    Py_ssize_t n = PyTuple_GET_SIZE(predicates);
    memset(masks, 0, 8 * n);
    PyTypeObject *watched = TRACKED;
    TRACKED = Py_TYPE(state);
    Py_ssize_t failed = -1;
    for (Py_ssize_t k = 0; k < n; k++) {
        if (still_disabled(before, changed, masks, k)) /* for a predicate: it still holds */
            continue;
        READS = 0;
        PyObject *ok = PyObject_CallOneArg(PyTuple_GET_ITEM(predicates, k), state);
        if (ok == NULL && PyErr_ExceptionMatches(PyExc_KeyboardInterrupt)) {
            TRACKED = watched; /* Ctrl-C, or the spec's own: the caller tells them apart */
            return -2;
        }
        if (ok != Py_True) {
            PyErr_Clear();
            Py_XDECREF(ok);
            failed = k;
            break;
        }
        Py_DECREF(ok);
        uint64_t mask = READS | MARK;
        memcpy(masks + 8 * k, &mask, 8);
    }
    TRACKED = watched;
    return failed;
}

/* holds(predicates, state, masks, changed, out) -> -1 if every predicate holds on `state`, else
 * the index of the first that does not: returned anything but True, or raised (the error is
 * dropped: the caller evaluates that one again, which says why). An invariant that held in
 * the parent (MARK in `masks`) and read none of the `changed` variables holds here too and is
 * not called. `out` (a bytearray, 8 bytes per predicate) gets MARK and the variables each
 * read, for those that held. */
PyObject *
hot_holds(PyObject *module, PyObject *const *args, Py_ssize_t nargs)
{
    if (nargs != 5 || !PyTuple_Check(args[0]) || !PyByteArray_Check(args[4]) ||
        (args[2] != Py_None && !PyBytes_Check(args[2]))) {
        PyErr_SetString(PyExc_TypeError, "holds(predicates, state, masks, changed, out)");
        return NULL;
    }
    PyObject *predicates = args[0], *state = args[1], *held = args[2], *out = args[4];
    Py_ssize_t n = PyTuple_GET_SIZE(predicates);
    if (PyByteArray_GET_SIZE(out) < 8 * n || (held != Py_None && PyBytes_GET_SIZE(held) < 8 * n)) {
        PyErr_SetString(PyExc_ValueError, "holds(): 8 bytes per predicate");
        return NULL;
    }
    uint64_t changed = PyLong_AsUnsignedLongLongMask(args[3]);
    if (changed == (uint64_t)-1 && PyErr_Occurred())
        return NULL;
    const char *before = held == Py_None ? NULL : PyBytes_AS_STRING(held);
    Py_ssize_t failed = holds_core(predicates, state, before, changed, PyByteArray_AS_STRING(out));
    return failed == -2 ? NULL : PyLong_FromSsize_t(failed);
}

/* A read set (checker.model.ReadSet, a tuple of 3) of type `type`, made as tuple.__new__
 * makes one.
 * Steals no reference. */
static PyObject *
new_read_set(PyTypeObject *type, PyObject *parent, PyObject *changed, PyObject *invariants)
{
    PyObject *read_set = type->tp_alloc(type, 3);
    if (read_set == NULL)
        return NULL;
    Py_INCREF(parent);
    Py_INCREF(changed);
    Py_INCREF(invariants);
    PyTuple_SET_ITEM(read_set, 0, parent);
    PyTuple_SET_ITEM(read_set, 1, changed);
    PyTuple_SET_ITEM(read_set, 2, invariants);
    return read_set;
}

int
read_set_type_ok(PyObject *type)
{
    if (PyType_Check(type) && PyType_IsSubtype((PyTypeObject *)type, &PyTuple_Type) &&
        ((PyTypeObject *)type)->tp_basicsize == PyTuple_Type.tp_basicsize)
        return 1;
    PyErr_SetString(PyExc_TypeError, "the read set type must be a NamedTuple");
    return 0;
}

/* verdicts(predicates, states, read_sets, ReadSet) -> (failing, read_sets): holds() on each
 * state with its read set (a ReadSet: the parent's masks, the variables changed, the
 * invariants' masks in the
 * parent or None). `failing`: [index, predicate] for each state on which one did not hold;
 * `read_sets`: a new list, each state's read set with its own invariants' masks instead. The
 * read sets
 * given are not changed (a caller that falls back to evaluating one by one still has them). */
PyObject *
hot_verdicts(PyObject *module, PyObject *const *args, Py_ssize_t nargs)
{
    if (nargs != 4 || !PyTuple_Check(args[0]) || !PyList_Check(args[1]) ||
        !PyList_Check(args[2]) || PyList_GET_SIZE(args[1]) != PyList_GET_SIZE(args[2])) {
        PyErr_SetString(PyExc_TypeError, "verdicts(predicates, states, read_sets, ReadSet)");
        return NULL;
    }
    if (!read_set_type_ok(args[3]))
        return NULL;
    PyObject *predicates = args[0], *states = args[1], *read_sets = args[2];
    PyTypeObject *type = (PyTypeObject *)args[3];
    Py_ssize_t n = PyTuple_GET_SIZE(predicates), count = PyList_GET_SIZE(states);
    char *masks = PyMem_Malloc(8 * n + 8);
    PyObject *failing = PyList_New(0), *made = PyList_New(count);
    if (masks == NULL || failing == NULL || made == NULL) {
        PyMem_Free(masks);
        Py_XDECREF(failing);
        Py_XDECREF(made);
        return PyErr_NoMemory();
    }
    for (Py_ssize_t k = 0; k < count; k++) {
        PyObject *read_set = PyList_GET_ITEM(read_sets, k);
        if (!PyTuple_Check(read_set) || PyTuple_GET_SIZE(read_set) != 3) {
            PyErr_SetString(PyExc_TypeError, "verdicts(): a read set is a ReadSet");
            goto error;
        }
        PyObject *held = PyTuple_GET_ITEM(read_set, 2);
        if (held != Py_None && (!PyBytes_Check(held) || PyBytes_GET_SIZE(held) < 8 * n)) {
            PyErr_SetString(PyExc_ValueError, "verdicts(): 8 bytes per predicate");
            goto error;
        }
        uint64_t changed = PyLong_AsUnsignedLongLongMask(PyTuple_GET_ITEM(read_set, 1));
        if (changed == (uint64_t)-1 && PyErr_Occurred())
            goto error;
        const char *before = held == Py_None ? NULL : PyBytes_AS_STRING(held);
        Py_ssize_t failed =
            holds_core(predicates, PyList_GET_ITEM(states, k), before, changed, masks);
        if (failed == -2)
            goto error;
        PyObject *own = PyBytes_FromStringAndSize(masks, 8 * n);
        if (own == NULL)
            goto error;
        PyObject *next =
            new_read_set(type, PyTuple_GET_ITEM(read_set, 0), PyTuple_GET_ITEM(read_set, 1), own);
        Py_DECREF(own);
        if (next == NULL)
            goto error;
        PyList_SET_ITEM(made, k, next);
        if (failed >= 0) {
            PyObject *pair = Py_BuildValue("[nn]", k, failed);
            if (pair == NULL || PyList_Append(failing, pair) < 0) {
                Py_XDECREF(pair);
                goto error;
            }
            Py_DECREF(pair);
        }
    }
    PyMem_Free(masks);
    PyObject *result = PyTuple_Pack(2, failing, made);
    Py_DECREF(failing);
    Py_DECREF(made);
    return result;
error:
    PyMem_Free(masks);
    Py_DECREF(failing);
    Py_DECREF(made); /* (PyList_New's empty items are NULL: freed as such) */
    return NULL;
}

/* The variables (bits, as in READS) whose values are not the same objects in `parent` and
 * `state`, two tuples of one size: an unchanged variable is shared with the parent. */
static uint64_t
changed_bits(PyObject *parent, PyObject *state)
{
    uint64_t changed = 0;
    Py_ssize_t n = PyTuple_GET_SIZE(parent);
    for (Py_ssize_t i = 1; i < n; i++)
        if (PyTuple_GET_ITEM(parent, i) != PyTuple_GET_ITEM(state, i))
            changed |= bit_of(i);
    return changed;
}

/* Append to the list `out`, for each of states[start:], ReadSet(masks, changed(parent, state),
 * held); -1 on an error. */
int
append_read_sets(PyTypeObject *type, PyObject *parent, PyObject *states, Py_ssize_t start,
             PyObject *masks, PyObject *held, PyObject *out)
{
    Py_ssize_t width = PyTuple_GET_SIZE(parent);
    for (Py_ssize_t k = start < 0 ? 0 : start; k < PyList_GET_SIZE(states); k++) {
        PyObject *state = PyList_GET_ITEM(states, k);
        if (!PyTuple_Check(state) || PyTuple_GET_SIZE(state) != width) {
            PyErr_SetString(PyExc_TypeError, "read_sets_of(): states of the parent's shape");
            return -1;
        }
        PyObject *bits = PyLong_FromUnsignedLongLong(changed_bits(parent, state));
        if (bits == NULL)
            return -1;
        PyObject *read_set = new_read_set(type, masks, bits, held);
        Py_DECREF(bits);
        if (read_set == NULL || PyList_Append(out, read_set) < 0) {
            Py_XDECREF(read_set);
            return -1;
        }
        Py_DECREF(read_set);
    }
    return 0;
}

/* read_sets_of(ReadSet, parent, states, start, masks, held, out): appends to the list `out`,
 * for each of states[start:], ReadSet(masks, changed(parent, state), held): what expand_batch
 * keeps with a candidate (the parent's guards' masks, what the step changed, the parent's
 * invariants'). */
PyObject *
hot_read_sets_of(PyObject *module, PyObject *const *args, Py_ssize_t nargs)
{
    if (nargs != 7 || !PyTuple_Check(args[1]) || !PyList_Check(args[2]) ||
        !PyList_Check(args[6])) {
        PyErr_SetString(PyExc_TypeError,
                        "read_sets_of(ReadSet, parent, states, start, masks, held, out)");
        return NULL;
    }
    if (!read_set_type_ok(args[0]))
        return NULL;
    PyTypeObject *type = (PyTypeObject *)args[0];
    PyObject *parent = args[1], *states = args[2], *out = args[6];
    Py_ssize_t start = PyLong_AsSsize_t(args[3]);
    if (start == -1 && PyErr_Occurred())
        return NULL;
    if (append_read_sets(type, parent, states, start, args[4], args[5], out) < 0)
        return NULL;
    Py_RETURN_NONE;
}

/* changed(parent, state) -> the variables (bits, as in READS) whose values are not the same
 * objects in the two states: an unchanged variable is shared with the parent. */
PyObject *
hot_changed(PyObject *module, PyObject *const *args, Py_ssize_t nargs)
{
    if (nargs != 2 || !PyTuple_Check(args[0]) || !PyTuple_Check(args[1]) ||
        PyTuple_GET_SIZE(args[0]) != PyTuple_GET_SIZE(args[1])) {
        PyErr_SetString(PyExc_TypeError, "changed(parent, state): two states of one shape");
        return NULL;
    }
    return PyLong_FromUnsignedLongLong(changed_bits(args[0], args[1]));
}
