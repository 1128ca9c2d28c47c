#include "hot.h"

static PyObject *RECORD;      /* checker.values.record.Record: calling it builds a record */
static PyObject *FACTORY;     /* checker.values.record._factory: Record(...) in Python */
static PyObject *MAKERS;      /* keyword order as written -> (shape, where each field is) */

/* -- RecordType: Record(...) ------------------------------------------------------------ */

static PyObject *KEY_TUPLES; /* keys tuple -> itself: the maps Record({...}) built share it */
#define KEY_TUPLES_SIZE 4096

/* The one tuple of a map's key set equal to `tuple` (a new reference; `tuple`'s is taken;
 * NULL with an exception on failure, or if `tuple` is NULL), so that kind_ok sees a map's
 * keys unchanged by their identity. */
PyObject *
shared_keys(PyObject *tuple)
{
    if (tuple != NULL && KEY_TUPLES == NULL)
        KEY_TUPLES = PyDict_New();
    PyObject *shared = tuple == NULL || KEY_TUPLES == NULL ? NULL
                       : PyDict_GET_SIZE(KEY_TUPLES) < KEY_TUPLES_SIZE
                           ? PyDict_SetDefault(KEY_TUPLES, tuple, tuple)
                           : PyDict_GetItemWithError(KEY_TUPLES, tuple); /* borrowed */
    if (shared == NULL && PyErr_Occurred()) {
        Py_XDECREF(tuple);
        return NULL;
    }
    if (shared != NULL) {
        Py_INCREF(shared);
        Py_SETREF(tuple, shared);
    }
    return tuple;
}

/* The Map (Map, keys, values) of `keys` (a new reference, taken) and the n `items` (borrowed,
 * held by the caller) frozen; NULL with an exception. */
static PyObject *
map_of(PyObject *keys, PyObject *const *items, Py_ssize_t n)
{
    PyObject *values = keys == NULL ? NULL : PyTuple_New(n);
    PyObject *map = values == NULL ? NULL : alloc(MAP, 3);
    if (map == NULL) {
        Py_XDECREF(keys);
        Py_XDECREF(values);
        return NULL;
    }
    Py_INCREF(MAP);
    PyTuple_SET_ITEM(map, 0, (PyObject *)MAP);
    PyTuple_SET_ITEM(map, 1, keys);
    PyTuple_SET_ITEM(map, 2, values);
    for (Py_ssize_t i = 0; i < n; i++) {
        PyObject *got = frozen(items[i], ATOMS);
        if (got == NULL) {
            Py_DECREF(map);
            return NULL;
        }
        PyTuple_SET_ITEM(values, i, got);
    }
    return map;
}

/* The key tuples of small int maps, direct-mapped by the addresses of their keys (a spec's
 * functions over the same numbers share their int objects): a map's keys found without a
 * tuple built and hashed. Each slot holds its tuple, which holds its keys. */
#define SMALL_MAP 16
#define KEY_SLOTS 256
static PyObject *KEY_SLOT[KEY_SLOTS];

/* The one tuple of the n `keys` (ints, distinct, in order), a new reference. */
static PyObject *
keys_of(PyObject *const *keys, Py_ssize_t n)
{
    uintptr_t h = (uintptr_t)n;
    for (Py_ssize_t i = 0; i < n; i++)
        h = h * 1000003 ^ ((uintptr_t)keys[i] >> 4);
    PyObject **slot = &KEY_SLOT[(h ^ (h >> 13)) & (KEY_SLOTS - 1)];
    PyObject *found = *slot;
    int hit = found != NULL && PyTuple_GET_SIZE(found) == n;
    for (Py_ssize_t i = 0; hit && i < n; i++)
        hit = PyTuple_GET_ITEM(found, i) == keys[i];
    if (hit)
        return Py_NewRef(found);
    PyObject *tuple = PyTuple_New(n);
    if (tuple == NULL)
        return NULL;
    for (Py_ssize_t i = 0; i < n; i++)
        PyTuple_SET_ITEM(tuple, i, Py_NewRef(keys[i]));
    tuple = shared_keys(tuple);
    if (tuple != NULL)
        Py_XSETREF(*slot, Py_NewRef(tuple));
    return tuple;
}

/* int_map of a dict of at most SMALL_MAP keys that fit a long: its keys and values read once
 * into arrays, put in order of the keys (most dicts list them in order already). 0: not such a
 * dict (NULL in *out, no exception). */
static int
small_int_map(PyObject *dict, PyObject **out)
{
    Py_ssize_t n = PyDict_GET_SIZE(dict), pos = 0, i = 0;
    PyObject *key, *value, *keys[SMALL_MAP], *values[SMALL_MAP];
    long numbers[SMALL_MAP];
    int in_order = 1;
    *out = NULL;
    if (n > SMALL_MAP)
        return 0;
    while (PyDict_Next(dict, &pos, &key, &value)) {
        int overflow = 0;
        long number = PyLong_CheckExact(key) && i < n ? PyLong_AsLongAndOverflow(key, &overflow)
                                                        : (overflow = 1, 0);
        if (overflow)
            return 0; /* (a key of another type: int_map says no) */
        in_order &= i == 0 || numbers[i - 1] < number;
        keys[i] = key;
        values[i] = value;
        numbers[i++] = number;
    }
    if (i != n)
        return 0;
    for (Py_ssize_t j = 1; !in_order && j < n; j++) /* insertion sort, by the numbers */
        for (Py_ssize_t k = j; k > 0 && numbers[k - 1] > numbers[k]; k--) {
            long number = numbers[k];
            PyObject *key_k = keys[k], *value_k = values[k];
            numbers[k] = numbers[k - 1], keys[k] = keys[k - 1], values[k] = values[k - 1];
            numbers[k - 1] = number, keys[k - 1] = key_k, values[k - 1] = value_k;
        }
    for (Py_ssize_t j = 0; j < n; j++) /* held while they are frozen (a Mapping's Python code
                                          could change the dict) */
        Py_INCREF(values[j]);
    *out = map_of(keys_of(keys, n), values, n);
    for (Py_ssize_t j = 0; j < n; j++)
        Py_DECREF(values[j]);
    return 1;
}

/* Record({1: a, 2: b}): the Map of a dict whose keys are all ints (in their natural order,
 * as canonical_order gives it), its values frozen; NULL without an exception for any other
 * dict (the Python factory builds it). */
static PyObject *
int_map(PyObject *dict)
{
    Py_ssize_t n = PyDict_GET_SIZE(dict), pos = 0;
    PyObject *key, *value, *made;
    if (n == 0)
        return NULL;
    if (small_int_map(dict, &made))
        return made;
    while (PyDict_Next(dict, &pos, &key, &value))
        if (!PyLong_CheckExact(key))
            return NULL;
    PyObject *keys = PyDict_Keys(dict);
    if (keys == NULL || PyList_Sort(keys) < 0) {
        Py_XDECREF(keys);
        return NULL;
    }
    PyObject *values = PyTuple_New(n);
    PyObject *map = values == NULL ? NULL : alloc(MAP, 3);
    if (map == NULL)
        goto fail;
    for (Py_ssize_t i = 0; i < n; i++) {
        /* held while it is frozen: freezing a Mapping runs its Python code, which could change
         * the dict */
        PyObject *item = Py_XNewRef(PyDict_GetItemWithError(dict, PyList_GET_ITEM(keys, i)));
        PyObject *got = item == NULL ? NULL : frozen(item, ATOMS);
        Py_XDECREF(item);
        if (got == NULL) {
            if (!PyErr_Occurred())
                PyErr_SetString(PyExc_RuntimeError, "Record(): the dict changed");
            Py_DECREF(map);
            goto fail;
        }
        PyTuple_SET_ITEM(values, i, got);
    }
    Py_INCREF(MAP);
    PyTuple_SET_ITEM(map, 0, (PyObject *)MAP);
    PyTuple_SET_ITEM(map, 2, values);
    PyObject *tuple = shared_keys(PyList_AsTuple(keys));
    Py_DECREF(keys);
    if (tuple == NULL) {
        Py_DECREF(map);
        return NULL;
    }
    PyTuple_SET_ITEM(map, 1, tuple);
    return map;
fail:
    Py_DECREF(keys);
    Py_XDECREF(values);
    return NULL;
}

/* Record({"leader": 1, "isr": ...}): the record of a dict whose keys are field names in an
 * order met before (as keywords, or as such a dict: the Python factory registers each order it
 * builds), its values frozen; NULL without an exception for any other dict. */
static PyObject *
str_record(PyObject *dict)
{
    Py_ssize_t n = PyDict_GET_SIZE(dict), pos = 0, i = 0;
    PyObject *key, *value;
    if (n == 0 || n > 64)
        return NULL;
    PyObject *order = PyTuple_New(n);
    if (order == NULL)
        return NULL;
    PyObject *values[64];
    while (PyDict_Next(dict, &pos, &key, &value)) {
        if (!PyUnicode_CheckExact(key) || i >= n) {
            Py_DECREF(order);
            return NULL;
        }
        Py_INCREF(key);
        PyTuple_SET_ITEM(order, i, key);
        values[i++] = value; /* borrowed: the dict holds them while we build */
    }
    PyObject *entry = i == n && MAKERS != NULL ? PyDict_GetItemWithError(MAKERS, order) : NULL;
    Py_DECREF(order);
    if (entry == NULL)
        return NULL;
    PyTypeObject *shape = (PyTypeObject *)PyTuple_GET_ITEM(entry, 0);
    PyObject *where = PyTuple_GET_ITEM(entry, 1);
    if (PyTuple_GET_SIZE(where) != n)
        return NULL;
    PyObject *record = shaped(shape, n);
    if (record == NULL)
        return NULL;
    for (Py_ssize_t k = 0; k < n; k++) /* held while they are frozen, as in int_map */
        Py_INCREF(values[k]);
    Py_ssize_t k = 0;
    for (; k < n; k++) {
        PyObject *got = frozen(values[PyLong_AsSsize_t(PyTuple_GET_ITEM(where, k))], ATOMS);
        if (got == NULL)
            break;
        PyTuple_SET_ITEM(record, k + 1, got);
    }
    for (Py_ssize_t j = 0; j < n; j++)
        Py_DECREF(values[j]);
    if (k < n) {
        Py_DECREF(record);
        return NULL;
    }
    return record;
}

/* -- freeze: a value as an immutable state value (checker.values.record.freeze_python) ------ */

/* type(value) in ATOMS: the builtin atoms and Map at once, the record shapes by the set (1, 0,
 * or -1 with an exception). */
static int
atom(PyObject *value)
{
    return is_atom(value) ? 1 : PySet_Contains(ATOMS, (PyObject *)Py_TYPE(value));
}

/* The tuple of the n `items` (borrowed, held by the caller), each frozen. */
static PyObject *
frozen_items(PyObject *const *items, Py_ssize_t n)
{
    PyObject *out = PyTuple_New(n);
    if (out == NULL)
        return NULL;
    for (Py_ssize_t i = 0; i < n; i++) {
        PyObject *got = freeze_value(items[i]);
        if (got == NULL) {
            Py_DECREF(out);
            return NULL;
        }
        PyTuple_SET_ITEM(out, i, got);
    }
    return out;
}

/* A tuple: itself if its items are atoms, else the tuple of its items frozen. */
static PyObject *
freeze_tuple(PyObject *value)
{
    Py_ssize_t n = PyTuple_GET_SIZE(value);
    for (Py_ssize_t i = 0; i < n; i++) {
        int ok = atom(PyTuple_GET_ITEM(value, i));
        if (ok < 0)
            return NULL;
        if (!ok)
            return frozen_items(&PyTuple_GET_ITEM(value, 0), n);
    }
    return Py_NewRef(value);
}

/* A set or frozenset: a frozenset of its items, frozen unless they are all atoms (a frozenset
 * of atoms is itself). */
static PyObject *
freeze_set(PyObject *value)
{
    PyObject *iterator = PyObject_GetIter(value), *item;
    if (iterator == NULL)
        return NULL;
    int atoms = 1;
    while (atoms == 1 && (item = PyIter_Next(iterator)) != NULL) {
        atoms = atom(item);
        Py_DECREF(item);
    }
    Py_DECREF(iterator);
    if (atoms < 0 || PyErr_Occurred())
        return NULL;
    if (atoms)
        return PyFrozenSet_CheckExact(value) ? Py_NewRef(value) : PyFrozenSet_New(value);
    PyObject *items = PySequence_Tuple(value); /* (a snapshot: freezing runs no set code) */
    if (items == NULL)
        return NULL;
    PyObject *each = frozen_items(&PyTuple_GET_ITEM(items, 0), PyTuple_GET_SIZE(items));
    Py_DECREF(items);
    if (each == NULL)
        return NULL;
    PyObject *out = PyFrozenSet_New(each);
    Py_DECREF(each);
    return out;
}

/* freeze_python's value, in C for what spec code builds most (tuples, lists, sets, dicts of
 * int keys or of field names in an order met before); anything else (another Mapping, an
 * empty dict, a namedtuple, a value refused with its message) by freeze_python itself. */
PyObject *
freeze_value(PyObject *value)
{
    int ok = atom(value);
    if (ok != 0)
        return ok < 0 ? NULL : Py_NewRef(value);
    if (Py_TYPE(value) != &PyTuple_Type && PyType_IsSubtype(Py_TYPE(value), &RecordBase))
        return Py_NewRef(value); /* (a record of a shape unpickled) */
    return freeze_other(value);
}

/* freeze_value of a value that is no atom and no record (frozen() has looked already). */
PyObject *
freeze_other(PyObject *value)
{
    PyTypeObject *type = Py_TYPE(value);
    if (type != &PyTuple_Type && type != &PyList_Type && type != &PySet_Type &&
        type != &PyFrozenSet_Type && (type != &PyDict_Type || PyDict_GET_SIZE(value) == 0))
        return PyObject_CallOneArg(FREEZE, value);
    if (Py_EnterRecursiveCall(" while freezing a state value"))
        return NULL;
    PyObject *out;
    if (type == &PyTuple_Type) {
        out = freeze_tuple(value);
    } else if (type == &PyList_Type) {
        PyObject *items = PyList_AsTuple(value); /* (a snapshot: the list could change) */
        out = items == NULL ? NULL
                            : frozen_items(&PyTuple_GET_ITEM(items, 0), PyTuple_GET_SIZE(items));
        Py_XDECREF(items);
    } else if (type != &PyDict_Type) {
        out = freeze_set(value);
    } else if ((out = int_map(value)) == NULL && !PyErr_Occurred() &&
               (out = str_record(value)) == NULL && !PyErr_Occurred()) {
        out = PyObject_CallOneArg(FREEZE, value);
    }
    Py_LeaveRecursiveCall();
    return out;
}

/* freeze(value): the value as an immutable state value, or StateError. */
PyObject *
hot_freeze(PyObject *module, PyObject *value)
{
    if (FREEZE == NULL || MAP == NULL || ATOMS == NULL) {
        PyErr_SetString(PyExc_RuntimeError, "freeze(): records are not configured");
        return NULL;
    }
    return freeze_value(value);
}

/* Record(field=value, ...), called with the keywords of a known order: the record built from
 * the arguments directly; anything else goes to the Python factory. */
static PyObject *
record_vectorcall(PyObject *callable, PyObject *const *args, size_t nargsf, PyObject *kwnames)
{
    Py_ssize_t nargs = PyVectorcall_NARGS(nargsf);
    if (nargs == 0 && kwnames != NULL && MAKERS != NULL) {
        PyObject *entry = PyDict_GetItemWithError(MAKERS, kwnames); /* borrowed */
        if (entry == NULL && PyErr_Occurred())
            return NULL;
        if (entry != NULL) {
            PyTypeObject *shape = (PyTypeObject *)PyTuple_GET_ITEM(entry, 0);
            PyObject *where = PyTuple_GET_ITEM(entry, 1);
            Py_ssize_t n = PyTuple_GET_SIZE(where);
            PyObject *record = shaped(shape, n);
            if (record == NULL)
                return NULL;
            for (Py_ssize_t i = 0; i < n; i++) {
                Py_ssize_t from = PyLong_AsSsize_t(PyTuple_GET_ITEM(where, i));
                PyObject *value = frozen(args[from], ATOMS);
                if (value == NULL) {
                    Py_DECREF(record);
                    return NULL;
                }
                PyTuple_SET_ITEM(record, i + 1, value);
            }
            return record;
        }
    }
    if (nargs == 1 && (kwnames == NULL || PyTuple_GET_SIZE(kwnames) == 0) &&
        PyDict_CheckExact(args[0]) && MAP != NULL) {
        PyObject *map = int_map(args[0]);
        if (map != NULL || PyErr_Occurred())
            return map;
        PyObject *record = str_record(args[0]);
        if (record != NULL || PyErr_Occurred())
            return record;
    }
    return PyObject_Vectorcall(FACTORY, args, nargsf, kwnames);
}

/* Calling a class of this metaclass: Record itself builds records (above); a shape is called
 * as any tuple type, with its whole tuple. */
static PyObject *
record_type_call(PyObject *cls, PyObject *args, PyObject *kwargs)
{
    if (cls == RECORD && RECORD != NULL)
        return PyObject_Call(FACTORY, args, kwargs);
    return PyType_Type.tp_call(cls, args, kwargs);
}

PyTypeObject RecordType = {
    PyVarObject_HEAD_INIT(NULL, 0)
    .tp_name = "checker._hot.RecordType",
    .tp_flags = Py_TPFLAGS_DEFAULT | Py_TPFLAGS_BASETYPE | Py_TPFLAGS_HAVE_VECTORCALL,
    .tp_doc = "The metaclass of Record: Record(...) builds a record of the right shape.",
    .tp_call = record_type_call,
    .tp_vectorcall_offset = offsetof(PyTypeObject, tp_vectorcall),
};

/* The record of `shape` whose fields are those of `record` at `indices` (positions in the
 * tuple, from 1; a tuple of ints): take() and without(). */
static PyObject *
take_fields(PyTypeObject *shape, PyObject *indices, PyObject *record)
{
    Py_ssize_t n = PyTuple_GET_SIZE(indices), size = PyTuple_GET_SIZE(record);
    PyObject *out = shaped(shape, n);
    if (out == NULL)
        return NULL;
    for (Py_ssize_t i = 0; i < n; i++) {
        Py_ssize_t at = PyLong_AsSsize_t(PyTuple_GET_ITEM(indices, i));
        if (at < 1 || at >= size) {
            if (!PyErr_Occurred())
                PyErr_Format(PyExc_IndexError, "take(): no field at %zd", at);
            Py_DECREF(out);
            return NULL;
        }
        if (Py_TYPE(record) == TRACKED) /* (the new record's shape is not watched) */
            READS |= bit_of(at);
        PyObject *item = PyTuple_GET_ITEM(record, at);
        Py_INCREF(item);
        PyTuple_SET_ITEM(out, i + 1, item);
    }
    return out;
}

/* take(shape, indices, record): the record of `shape` whose fields are those of `record` at
 * `indices` (positions in the tuple, from 1): a view's projection, in C. */
PyObject *
hot_take(PyObject *module, PyObject *const *args, Py_ssize_t nargs)
{
    if (nargs != 3 || !PyType_Check(args[0]) ||
        !PyType_IsSubtype((PyTypeObject *)args[0], &RecordBase) ||
        !PyTuple_CheckExact(args[1]) || !PyTuple_Check(args[2])) {
        PyErr_SetString(PyExc_TypeError, "take(shape, indices, record)");
        return NULL;
    }
    return take_fields((PyTypeObject *)args[0], args[1], args[2]);
}

/* without(record, *keys): a record of a shape without those keys, the smaller shape and the
 * positions it keeps found once per shape and keys (the same key objects: a spec's view
 * names them in its code) in DROPS; a map, or anything else, goes to without_python. */
#define DROP_SLOTS 64
#define MAX_DROPPED 16
typedef struct {
    PyObject *type, *keys, *shape, *indices; /* held */
} DropSlot;
static DropSlot DROPS[DROP_SLOTS];

PyObject *
hot_without(PyObject *module, PyObject *const *args, Py_ssize_t nargs)
{
    if (WITHOUT_SLOW == NULL || DROP_PLAN == NULL) {
        PyErr_SetString(PyExc_RuntimeError, "without(): records are not configured");
        return NULL;
    }
    PyTypeObject *type = nargs >= 1 ? Py_TYPE(args[0]) : NULL;
    Py_ssize_t n = nargs - 1;
    if (type == NULL || type == MAP || !PyType_IsSubtype(type, &RecordBase) || n > MAX_DROPPED)
        return PyObject_Vectorcall(WITHOUT_SLOW, args, nargs, NULL);
    uintptr_t h = (uintptr_t)type >> 4;
    for (Py_ssize_t i = 1; i < nargs; i++)
        h = h * 1000003 ^ ((uintptr_t)args[i] >> 4);
    DropSlot *slot = &DROPS[(h ^ (h >> 11)) & (DROP_SLOTS - 1)];
    int hit = slot->type == (PyObject *)type && PyTuple_GET_SIZE(slot->keys) == n;
    for (Py_ssize_t i = 0; hit && i < n; i++)
        hit = PyTuple_GET_ITEM(slot->keys, i) == args[i + 1];
    if (!hit) {
        PyObject *keys = PyTuple_New(n);
        if (keys == NULL)
            return NULL;
        for (Py_ssize_t i = 0; i < n; i++)
            PyTuple_SET_ITEM(keys, i, Py_NewRef(args[i + 1]));
        PyObject *plan = PyObject_CallFunctionObjArgs(DROP_PLAN, (PyObject *)type, keys, NULL);
        if (plan == NULL) {
            Py_DECREF(keys);
            return NULL;
        }
        if (!PyTuple_CheckExact(plan) || PyTuple_GET_SIZE(plan) != 2 ||
            !PyType_Check(PyTuple_GET_ITEM(plan, 0)) ||
            !PyType_IsSubtype((PyTypeObject *)PyTuple_GET_ITEM(plan, 0), &RecordBase) ||
            !PyTuple_CheckExact(PyTuple_GET_ITEM(plan, 1))) {
            Py_DECREF(keys);
            Py_DECREF(plan);
            PyErr_SetString(PyExc_TypeError, "drop_plan() returns (shape, indices)");
            return NULL;
        }
        PyObject *shape = Py_NewRef(PyTuple_GET_ITEM(plan, 0));
        PyObject *indices = Py_NewRef(PyTuple_GET_ITEM(plan, 1));
        Py_DECREF(plan);
        Py_INCREF(type);
        Py_XSETREF(slot->type, (PyObject *)type);
        Py_XSETREF(slot->keys, keys);
        Py_XSETREF(slot->shape, shape);
        Py_XSETREF(slot->indices, indices);
    }
    return take_fields((PyTypeObject *)slot->shape, slot->indices, args[0]);
}

/* factory(Record, factory): Record(...) calls go through record_vectorcall. */
PyObject *
hot_factory(PyObject *module, PyObject *args)
{
    PyObject *record, *factory;
    if (!PyArg_ParseTuple(args, "O!O", &RecordType, &record, &factory))
        return NULL;
    Py_INCREF(record);
    Py_XSETREF(RECORD, record);
    Py_INCREF(factory);
    Py_XSETREF(FACTORY, factory);
    if (MAKERS == NULL && (MAKERS = PyDict_New()) == NULL)
        return NULL;
    ((PyTypeObject *)record)->tp_vectorcall = record_vectorcall;
    Py_RETURN_NONE;
}

/* maker(order, shape, where): Record(**fields) with the keywords in `order` is the record of
 * `shape` whose i-th field is the keyword at position where[i]. */
PyObject *
hot_maker(PyObject *module, PyObject *args)
{
    PyObject *order, *shape, *where;
    if (!PyArg_ParseTuple(args, "O!O!O!", &PyTuple_Type, &order, &PyType_Type, &shape,
                          &PyTuple_Type, &where))
        return NULL;
    if (MAKERS == NULL) {
        PyErr_SetString(PyExc_RuntimeError, "maker() before factory()");
        return NULL;
    }
    PyObject *entry = PyTuple_Pack(2, shape, where);
    if (entry == NULL || PyDict_SetItem(MAKERS, order, entry) < 0) {
        Py_XDECREF(entry);
        return NULL;
    }
    Py_DECREF(entry);
    Py_RETURN_NONE;
}

/* new(shape, *values): the record (shape, *values), each value frozen unless an atom. */
PyObject *
hot_new(PyObject *module, PyObject *const *args, Py_ssize_t nargs)
{
    if (nargs < 1 || !PyType_Check(args[0])) {
        PyErr_SetString(PyExc_TypeError, "new(shape, *values)");
        return NULL;
    }
    PyTypeObject *type = (PyTypeObject *)args[0];
    PyObject *record = shaped(type, nargs - 1);
    if (record == NULL)
        return NULL;
    for (Py_ssize_t i = 1; i < nargs; i++) {
        PyObject *value = frozen(args[i], ATOMS);
        if (value == NULL) {
            Py_DECREF(record);
            return NULL;
        }
        PyTuple_SET_ITEM(record, i, value);
    }
    return record;
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

/* put(container, key, value): a tuple, a record or a Map with the value of an existing key
 * changed, in C; a key added (or anything else) in Python. */
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
        if (at == -2)
            return NULL;
        if (at < 0)
            return PyObject_Vectorcall(PUT_SLOW, args, 3, NULL);
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
