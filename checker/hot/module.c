#include "hot.h"

/* -- what checker.values.record and checker.values.encoding hand over (hot.h says what) ------ */

HOT_SHARED PyObject *FROZEN;
HOT_SHARED PyObject *ATOMS;
HOT_SHARED PyObject *FREEZE;
HOT_SHARED PyObject *UNKNOWN;
HOT_SHARED PyObject *PUT_SLOW;
HOT_SHARED PyObject *STATE_ERROR;
HOT_SHARED PyObject *NO_FIELD;
HOT_SHARED PyObject *WITHOUT_SLOW;
HOT_SHARED PyObject *DROP_PLAN;
HOT_SHARED PyTypeObject *MAP;
HOT_SHARED PyObject *STR_INDEX;
HOT_SHARED PyObject *STR_KEYS;
HOT_SHARED PyObject *STR_BINDINGS;
HOT_SHARED PyObject *STR_ORDERED;
HOT_SHARED PyObject *STR_DOMAIN_FAILED;

/* rename(image, values) -> list: each of `values` renamed by the dict `image` (a value not in
 * it is itself; True and False are never renamed, though Python finds True == 1): what
 * checker.symmetry's Permutation maps over a tuple or a set, without a Python frame. */
PyObject *
hot_rename(PyObject *module, PyObject *const *args, Py_ssize_t nargs)
{
    if (nargs != 2 || !PyDict_CheckExact(args[0])) {
        PyErr_SetString(PyExc_TypeError, "rename(image, values): image is a dict");
        return NULL;
    }
    PyObject *image = args[0];
    PyObject *seq = PySequence_Fast(args[1], "rename(): values are iterable");
    if (seq == NULL)
        return NULL;
    Py_ssize_t n = PySequence_Fast_GET_SIZE(seq);
    PyObject **items = PySequence_Fast_ITEMS(seq);
    PyObject *out = PyList_New(n);
    for (Py_ssize_t i = 0; out != NULL && i < n; i++) {
        PyObject *v = items[i], *w = v;
        if (!PyBool_Check(v)) {
            w = PyDict_GetItemWithError(image, v); /* (borrowed) */
            if (w == NULL && PyErr_Occurred()) {
                Py_CLEAR(out);
                break;
            }
            if (w == NULL)
                w = v;
        }
        Py_INCREF(w);
        PyList_SET_ITEM(out, i, w);
    }
    Py_DECREF(seq);
    return out;
}

/* -- configure ---------------------------------------------------------------------------- */

PyObject *
hot_configure(PyObject *module, PyObject *args)
{
    PyObject *frozen_types, *atoms, *freeze, *unknown, *put_slow, *state_error, *map, *no_field;
    PyObject *without_slow, *drop_plan;
    if (!PyArg_ParseTuple(args, "O!O!OOOOO!OOO", &PySet_Type, &frozen_types, &PySet_Type, &atoms,
                          &freeze, &unknown, &put_slow, &state_error, &PyType_Type, &map,
                          &no_field, &without_slow, &drop_plan))
        return NULL;
    PyObject **slots[] = {&FROZEN, &ATOMS, &FREEZE, &UNKNOWN, &PUT_SLOW, &STATE_ERROR,
                          (PyObject **)&MAP, &NO_FIELD, &WITHOUT_SLOW, &DROP_PLAN};
    PyObject *values[] = {frozen_types, atoms, freeze, unknown, put_slow, state_error, map,
                          no_field, without_slow, drop_plan};
    for (size_t i = 0; i < sizeof values / sizeof values[0]; i++) {
        Py_INCREF(values[i]);
        Py_XSETREF(*slots[i], values[i]);
    }
    Py_RETURN_NONE;
}

static PyMethodDef hot_methods[] = {
    {"configure", hot_configure, METH_VARARGS,
     "configure(frozen, atoms, freeze, unknown, put_slow, StateError, Map, no_field,"
     " without_slow, drop_plan)"},
    {"new", (PyCFunction)(void (*)(void))hot_new, METH_FASTCALL, "new(shape, *values)"},
    {"candidates", (PyCFunction)(void (*)(void))hot_candidates, METH_FASTCALL,
     "candidates(shape, domains, slots, start, stop, where, picked): records of a product"},
    {"factory", hot_factory, METH_VARARGS, "factory(Record, factory)"},
    {"maker", hot_maker, METH_VARARGS, "maker(order, shape, where)"},
    {"take", (PyCFunction)(void (*)(void))hot_take, METH_FASTCALL,
     "take(shape, indices, record): the record of shape with record's fields at indices."},
    {"without", (PyCFunction)(void (*)(void))hot_without, METH_FASTCALL,
     "without(record, *keys): record without the given keys (missing keys are ignored)."},
    {"freeze", hot_freeze, METH_O,
     "The value as an immutable state value (records, tuples, frozensets), or StateError."},
    {"put", (PyCFunction)(void (*)(void))hot_put, METH_FASTCALL,
     "`container` with `key` set to `value`: a tuple by index or a Record by key."},
    {"update", (PyCFunction)(void (*)(void))hot_update, METH_FASTCALL,
     "update(container, *path, fn): the value at path replaced by fn(the old value)."},
    {"successors", (PyCFunction)(void (*)(void))hot_successors, METH_FASTCALL,
     "successors(context, state, states, actions, bindings[, masks, changed, out]) -> enabled"},
    {"holds", (PyCFunction)(void (*)(void))hot_holds, METH_FASTCALL,
     "holds(predicates, state, masks, changed, out) -> -1 or the first that does not hold"},
    {"verdicts", (PyCFunction)(void (*)(void))hot_verdicts, METH_FASTCALL,
     "verdicts(predicates, states, read_sets, ReadSet) -> ([[index, predicate], ...], new ones)"},
    {"read_sets_of", (PyCFunction)(void (*)(void))hot_read_sets_of, METH_FASTCALL,
     "read_sets_of(ReadSet, parent, states, start, masks, held, out): each one's, appended"},
    {"changed", (PyCFunction)(void (*)(void))hot_changed, METH_FASTCALL,
     "changed(parent, state) -> the variables that are not the same objects, as bits"},
    {"conforms", (PyCFunction)(void (*)(void))hot_conforms, METH_FASTCALL,
     "conforms(value, old, kind) -> whether value is of kind (kinds.conforms_python)"},
    {"field", hot_field, METH_VARARGS, "field(index, doc): a record shape's field"},
    {"dedupe", (PyCFunction)(void (*)(void))hot_dedupe, METH_FASTCALL,
     "dedupe(successors, start, seen, candidates, positions, offset, parent) -> None or an index"},
    {"encode", hot_encode, METH_O, "The canonical msgpack bytes of a frozen state value."},
    {"decode", hot_decode, METH_O, "The state value that encode() turned into `data`."},
    {"decode_all", (PyCFunction)(void (*)(void))hot_decode_all, METH_FASTCALL,
     "decode_all(blob, offsets) -> the states encoded back to back, at uint64 offsets"},
    {"decoding", hot_decoding, METH_VARARGS, "decoding(shapes, from_pairs)"},
    {"encode_state", hot_encode_state, METH_O,
     "encode(state), its container fields' encodings cached by identity."},
    {"encoded", (PyCFunction)(void (*)(void))hot_encoded, METH_FASTCALL,
     "encoded(states, start, fingerprint, encodings, views) -> the fingerprints, uint64 bytes"},
    {"expand_run", (PyCFunction)(void (*)(void))hot_expand_run, METH_FASTCALL,
     "expand_run(context, batch, states, start, stop, read_sets, seen) -> next"},
    {"rename", (PyCFunction)(void (*)(void))hot_rename, METH_FASTCALL,
     "rename(image, values) -> list: each value renamed by the dict image (bools never)"},
    {"renamed_encodings", (PyCFunction)(void (*)(void))hot_renamed_encodings, METH_FASTCALL,
     "renamed_encodings(state, images) -> list: state's encoding renamed by each dict image"},
    {"signatures", (PyCFunction)(void (*)(void))hot_signatures, METH_FASTCALL,
     "signatures(state, markers) -> dict: each model value's sorted occurrences in state"},
    {"forget_encodings", hot_forget_encodings, METH_NOARGS,
     "Empty encode_state's cache (the field values it holds)."},
    {NULL, NULL, 0, NULL},
};

static struct PyModuleDef hot_module = {
    PyModuleDef_HEAD_INIT, "checker._hot", "The engine's hot path in C.", -1, hot_methods,
};

PyMODINIT_FUNC
PyInit__hot(void)
{
    RecordBase.tp_base = &PyTuple_Type;
    RecordBase.tp_basicsize = PyTuple_Type.tp_basicsize;
    if (PyType_Ready(&RecordBase) < 0)
        return NULL;
    RecordType.tp_base = &PyType_Type;
    if (PyType_Ready(&RecordType) < 0)
        return NULL;
    if (PyType_Ready(&FieldType) < 0)
        return NULL;
    if (PyType_Ready(&OnceType) < 0)
        return NULL;
    STR_INDEX = PyUnicode_InternFromString("_index");
    STR_KEYS = PyUnicode_InternFromString("_keys");
    STR_BINDINGS = PyUnicode_InternFromString("bindings");
    STR_ORDERED = PyUnicode_InternFromString("ordered");
    STR_DOMAIN_FAILED = PyUnicode_InternFromString("domain_failed");
    if (STR_INDEX == NULL || STR_KEYS == NULL || STR_BINDINGS == NULL ||
        STR_ORDERED == NULL || STR_DOMAIN_FAILED == NULL)
        return NULL;
    PyObject *module = PyModule_Create(&hot_module);
    if (module == NULL)
        return NULL;
    Py_INCREF(&RecordBase);
    if (PyModule_AddObject(module, "RecordBase", (PyObject *)&RecordBase) < 0) {
        Py_DECREF(&RecordBase);
        Py_DECREF(module);
        return NULL;
    }
    Py_INCREF(&RecordType);
    if (PyModule_AddObject(module, "RecordType", (PyObject *)&RecordType) < 0) {
        Py_DECREF(&RecordType);
        Py_DECREF(module);
        return NULL;
    }
    Py_INCREF(&OnceType);
    if (PyModule_AddObject(module, "OncePerState", (PyObject *)&OnceType) < 0) {
        Py_DECREF(&OnceType);
        Py_DECREF(module);
        return NULL;
    }
    return module;
}
