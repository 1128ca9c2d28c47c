#include "hot.h"


/* A record shape's field: what collections' _tuplegetter is to a namedtuple, and it notes
 * the read of a watched state's variable. */
typedef struct {
    PyObject_HEAD
    Py_ssize_t index;
    uint64_t bit;
    PyObject *doc;
} Field;

static PyObject *
field_get(PyObject *self, PyObject *obj, PyObject *type)
{
    Field *field = (Field *)self;
    if (obj == NULL || obj == Py_None) {
        Py_INCREF(self);
        return self;
    }
    if (!PyTuple_Check(obj) || field->index >= PyTuple_GET_SIZE(obj)) {
        PyErr_Format(PyExc_TypeError, "a field of another kind of record (a %s)",
                     Py_TYPE(obj)->tp_name);
        return NULL;
    }
    if (Py_TYPE(obj) == TRACKED)
        READS |= field->bit;
    PyObject *value = PyTuple_GET_ITEM(obj, field->index);
    Py_INCREF(value);
    return value;
}

static int
field_set(PyObject *self, PyObject *obj, PyObject *value)
{
    PyErr_SetString(PyExc_AttributeError,
                     "a Record is immutable: build a new one with .replace(...) or put(...)");
    return -1;
}

static void
field_dealloc(PyObject *self)
{
    Py_XDECREF(((Field *)self)->doc);
    Py_TYPE(self)->tp_free(self);
}

static PyMemberDef field_members[] = {
    {"__doc__", T_OBJECT, offsetof(Field, doc), READONLY, NULL},
    {"index", T_PYSSIZET, offsetof(Field, index), READONLY, NULL},
    {NULL, 0, 0, 0, NULL},
};

/* Pickled (a shape class, which cloudpickle ships by value to Spark's executors) as a call of
 * checker.values.record.field_of(index, doc): a Field where the extension loads, else what
 * the pure-Python path uses. */
static PyObject *
field_reduce(PyObject *self, PyObject *Py_UNUSED(ignored))
{
    Field *field = (Field *)self;
    PyObject *module = PyImport_ImportModule("checker.values.record");
    if (module == NULL)
        return NULL;
    PyObject *make = PyObject_GetAttrString(module, "field_of");
    Py_DECREF(module);
    if (make == NULL)
        return NULL;
    return Py_BuildValue("N(nO)", make, field->index, field->doc);
}

static PyMethodDef field_methods[] = {
    {"__reduce__", field_reduce, METH_NOARGS, NULL},
    {NULL, NULL, 0, NULL},
};

PyTypeObject FieldType = {
    PyVarObject_HEAD_INIT(NULL, 0)
    .tp_name = "checker._hot.Field",
    .tp_basicsize = sizeof(Field),
    .tp_flags = Py_TPFLAGS_DEFAULT,
    .tp_doc = "A record shape's field (the item at `index`), noting reads of watched states.",
    .tp_dealloc = field_dealloc,
    .tp_descr_get = field_get,
    .tp_descr_set = field_set,
    .tp_members = field_members,
    .tp_methods = field_methods,
};

/* field(index, doc): the descriptor of a shape's field, the record's item at `index`. */
PyObject *
hot_field(PyObject *module, PyObject *args)
{
    Py_ssize_t index;
    PyObject *doc = Py_None;
    if (!PyArg_ParseTuple(args, "n|O", &index, &doc))
        return NULL;
    if (index < 1) {
        PyErr_SetString(PyExc_ValueError, "field(index): a field's item is 1 or more");
        return NULL;
    }
    Field *field = PyObject_New(Field, &FieldType);
    if (field == NULL)
        return NULL;
    field->index = index;
    field->bit = bit_of(index);
    Py_INCREF(doc);
    field->doc = doc;
    return (PyObject *)field;
}

/* -- RecordBase ----------------------------------------------------------------------------- */


/* 1 if `value` is a tuple or frozenset of atoms only, which freeze() returns as it is; 0 if
 * not (or it cannot tell: freeze() decides), -1 on error. */
static int
atoms_only(PyObject *value)
{
    if (PyTuple_CheckExact(value)) {
        for (Py_ssize_t i = 0, n = PyTuple_GET_SIZE(value); i < n; i++)
            if (!is_atom(PyTuple_GET_ITEM(value, i)))
                return 0;
        return 1;
    }
    if (!PyFrozenSet_CheckExact(value))
        return 0;
    PyObject *iterator = PyObject_GetIter(value), *item;
    if (iterator == NULL)
        return -1;
    int atoms = 1;
    while (atoms && (item = PyIter_Next(iterator)) != NULL) {
        atoms = is_atom(item);
        Py_DECREF(item);
    }
    Py_DECREF(iterator);
    return PyErr_Occurred() ? -1 : atoms;
}

PyObject *
frozen(PyObject *value, PyObject *kinds)
{
    if (is_atom(value)) /* (in ATOMS and FROZEN both) */
        return Py_NewRef(value);
    int ok = PySet_Contains(kinds, (PyObject *)Py_TYPE(value));
    if (ok < 0)
        return NULL;
    if (ok || PyType_IsSubtype(Py_TYPE(value), &RecordBase)) { /* freeze() keeps records */
        Py_INCREF(value);
        return value;
    }
    /* The sets and tuples of atoms that spec code builds, as freeze() would, without calling
     * it (a Python loop over their items). */
    if ((ok = atoms_only(value)) != 0) {
        if (ok < 0)
            return NULL;
        Py_INCREF(value);
        return value;
    }
    return freeze_other(value);
}


/* A new record of `shape` with room for n fields (all NULL), its shape in item 0. */
PyObject *
shaped(PyTypeObject *shape, Py_ssize_t n)
{
    PyObject *record = alloc(shape, n + 1);
    if (record == NULL)
        return NULL;
    Py_INCREF(shape);
    PyTuple_SET_ITEM(record, 0, (PyObject *)shape);
    return record;
}

static PyObject *
record_replace(PyObject *self, PyObject *const *args, Py_ssize_t nargsf, PyObject *kwnames)
{
    Py_ssize_t nargs = PyVectorcall_NARGS(nargsf);
    if (nargs != 0) {
        PyErr_SetString(PyExc_TypeError, "replace() takes keyword arguments only");
        return NULL;
    }
    PyTypeObject *type = Py_TYPE(self);
    PyObject *index = _PyType_Lookup(type, STR_INDEX); /* borrowed */
    if (index == NULL || !PyDict_CheckExact(index)) {
        PyErr_Format(PyExc_TypeError, "replace() of a %s", type->tp_name);
        return NULL;
    }
    Py_ssize_t n = PyTuple_GET_SIZE(self);
    Py_ssize_t changes = kwnames == NULL ? 0 : PyTuple_GET_SIZE(kwnames);
    /* A step that sets what is there already (an abort received by a manager that aborted)
     * makes its state again: the record itself is returned, whose hash is kept and which the
     * engine's dedupe finds by identity (36 % of TwoPhase's steps). The values a record holds
     * are frozen, so a value that is one of them needs no freezing to be compared; a name
     * that is no field is left to the loop below, which says so. */
    Py_ssize_t same = 0;
    while (same < changes) {
        PyObject *position = PyDict_GetItemWithError(index, PyTuple_GET_ITEM(kwnames, same));
        Py_ssize_t at = position == NULL ? -1 : PyLong_AsSsize_t(position);
        if (at < 1 || at >= n || PyTuple_GET_ITEM(self, at) != args[same])
            break;
        same++;
    }
    if (PyErr_Occurred())
        return NULL;
    if (same == changes) {
        Py_INCREF(self);
        return self;
    }
    PyObject *copy = alloc(type, n);
    if (copy == NULL)
        return NULL;
    for (Py_ssize_t i = 0; i < n; i++) {
        PyObject *item = PyTuple_GET_ITEM(self, i);
        Py_INCREF(item);
        PyTuple_SET_ITEM(copy, i, item);
    }
    for (Py_ssize_t k = 0; k < changes; k++) {
        PyObject *name = PyTuple_GET_ITEM(kwnames, k);
        PyObject *position = PyDict_GetItemWithError(index, name); /* borrowed */
        if (position == NULL) {
            if (!PyErr_Occurred()) {
                PyObject *bad = PyDict_New();
                if (bad != NULL && PyDict_SetItem(bad, name, args[k]) == 0) {
                    PyObject *r = PyObject_CallFunctionObjArgs(UNKNOWN, self, bad, NULL);
                    Py_XDECREF(r);
                }
                Py_XDECREF(bad);
                if (!PyErr_Occurred())
                    PyErr_SetObject(PyExc_KeyError, name);
            }
            Py_DECREF(copy);
            return NULL;
        }
        Py_ssize_t at = PyLong_AsSsize_t(position);
        if (at < 1 || at >= n) {
            if (!PyErr_Occurred())
                PyErr_SetString(PyExc_RuntimeError, "a Record shape's _index is broken");
            Py_DECREF(copy);
            return NULL;
        }
        PyObject *value = frozen(args[k], FROZEN);
        if (value == NULL) {
            Py_DECREF(copy);
            return NULL;
        }
        PyObject *old = PyTuple_GET_ITEM(copy, at);
        PyTuple_SET_ITEM(copy, at, value);
        Py_DECREF(old);
    }
    return copy;
}

/* Attribute access as for any object, except the message when there is no such field (a
 * Python __getattr__ would slow every access down: Python looks it up each time). A field,
 * the most read attribute of all (spec code reads `s.name` again and again), is read at once:
 * a shape has no instance __dict__ that could hide it. */
static PyObject *
record_getattro(PyObject *self, PyObject *name)
{
    if (PyUnicode_CheckExact(name)) {
        PyObject *descr = _PyType_Lookup(Py_TYPE(self), name); /* borrowed */
        if (descr != NULL && Py_TYPE(descr) == &FieldType)
            return field_get(descr, self, (PyObject *)Py_TYPE(self));
    }
    PyObject *found = PyObject_GenericGetAttr(self, name);
    if (found != NULL || NO_FIELD == NULL || !PyErr_ExceptionMatches(PyExc_AttributeError))
        return found;
    PyErr_Clear();
    return PyObject_CallFunctionObjArgs(NO_FIELD, self, name, NULL);
}

/* -- the mapping API, for shapes (keys: the type's _keys, positions: its _index) and for Map
 * (the tuple (Map, keys, values)). */


/* The keys, borrowed. */
static PyObject *
record_keys_of(PyObject *self)
{
    if (is_map(self))
        return PyTuple_GET_ITEM(self, 1);
    PyObject *keys = _PyType_Lookup(Py_TYPE(self), STR_KEYS);
    if (keys == NULL || !PyTuple_Check(keys)) {
        PyErr_Format(PyExc_TypeError, "a %s has no keys", Py_TYPE(self)->tp_name);
        return NULL;
    }
    return keys;
}

/* The value of `key` (new reference); NULL without an exception if there is none. */
static PyObject *
record_lookup(PyObject *self, PyObject *key)
{
    if (is_map(self)) {
        PyObject *keys = PyTuple_GET_ITEM(self, 1), *values = PyTuple_GET_ITEM(self, 2);
        Py_ssize_t n = PyTuple_GET_SIZE(keys);
        for (Py_ssize_t i = 0; i < n; i++) {
            int same = PyObject_RichCompareBool(PyTuple_GET_ITEM(keys, i), key, Py_EQ);
            if (same < 0)
                return NULL;
            if (same) {
                PyObject *value = PyTuple_GET_ITEM(values, i);
                Py_INCREF(value);
                return value;
            }
        }
        return NULL;
    }
    PyObject *index = _PyType_Lookup(Py_TYPE(self), STR_INDEX);
    if (index == NULL || !PyDict_Check(index))
        return NULL;
    PyObject *position = PyDict_GetItemWithError(index, key);
    if (position == NULL)
        return NULL;
    Py_ssize_t at = PyLong_AsSsize_t(position);
    if (Py_TYPE(self) == TRACKED)
        READS |= bit_of(at);
    PyObject *value = PyTuple_GET_ITEM(self, at);
    Py_INCREF(value);
    return value;
}

static PyObject *
record_subscript(PyObject *self, PyObject *key)
{
    PyObject *value = record_lookup(self, key);
    if (value == NULL && !PyErr_Occurred())
        PyErr_SetObject(PyExc_KeyError, key);
    return value;
}

static Py_ssize_t
record_length(PyObject *self)
{
    PyObject *keys = record_keys_of(self);
    return keys == NULL ? -1 : PyTuple_GET_SIZE(keys);
}

static int
record_contains(PyObject *self, PyObject *key)
{
    if (is_map(self))
        return PySequence_Contains(PyTuple_GET_ITEM(self, 1), key);
    PyObject *value = record_lookup(self, key);
    if (value == NULL)
        return PyErr_Occurred() ? -1 : 0;
    Py_DECREF(value);
    return 1;
}

static PyObject *
record_iter(PyObject *self)
{
    PyObject *keys = record_keys_of(self);
    return keys == NULL ? NULL : PyObject_GetIter(keys);
}

static PyObject *
record_keys(PyObject *self, PyObject *unused)
{
    PyObject *keys = record_keys_of(self);
    Py_XINCREF(keys);
    return keys;
}

static PyObject *
record_values(PyObject *self, PyObject *unused)
{
    read_all(self);
    if (is_map(self)) {
        PyObject *values = PyTuple_GET_ITEM(self, 2);
        Py_INCREF(values);
        return values;
    }
    return PyTuple_GetSlice(self, 1, PyTuple_GET_SIZE(self));
}

static PyObject *
record_items(PyObject *self, PyObject *unused)
{
    read_all(self);
    PyObject *keys = record_keys_of(self);
    if (keys == NULL)
        return NULL;
    Py_ssize_t n = PyTuple_GET_SIZE(keys);
    PyObject *items = PyTuple_New(n);
    if (items == NULL)
        return NULL;
    for (Py_ssize_t i = 0; i < n; i++) {
        PyObject *value = is_map(self) ? PyTuple_GET_ITEM(PyTuple_GET_ITEM(self, 2), i)
                                       : PyTuple_GET_ITEM(self, i + 1);
        PyObject *pair = PyTuple_Pack(2, PyTuple_GET_ITEM(keys, i), value);
        if (pair == NULL) {
            Py_DECREF(items);
            return NULL;
        }
        PyTuple_SET_ITEM(items, i, pair);
    }
    return items;
}

static PyObject *
record_get(PyObject *self, PyObject *const *args, Py_ssize_t nargs)
{
    if (nargs < 1 || nargs > 2) {
        PyErr_SetString(PyExc_TypeError, "get(key, default=None)");
        return NULL;
    }
    PyObject *value = record_lookup(self, args[0]);
    if (value != NULL || PyErr_Occurred())
        return value;
    PyObject *fallback = nargs == 2 ? args[1] : Py_None;
    Py_INCREF(fallback);
    return fallback;
}

static PyMappingMethods record_as_mapping = {
    .mp_length = record_length,
    .mp_subscript = record_subscript,
};

static PySequenceMethods record_as_sequence = {
    .sq_length = record_length,
    .sq_contains = record_contains,
};

static PyMethodDef record_methods[] = {
    {"replace", (PyCFunction)(void (*)(void))record_replace, METH_FASTCALL | METH_KEYWORDS,
     "A copy with the named existing fields set to new values."},
    {"keys", record_keys, METH_NOARGS, "The keys, in canonical order."},
    {"values", record_values, METH_NOARGS, "The values, in the order of the keys."},
    {"items", record_items, METH_NOARGS, "(key, value) pairs, in the order of the keys."},
    {"get", (PyCFunction)(void (*)(void))record_get, METH_FASTCALL,
     "The value of key, or default."},
    {NULL, NULL, 0, NULL},
};

/* hash(record): the tuple's hash, exactly (CPython's tuplehash, 64-bit). A successor shares
 * most of its values with its parent, and the engine hashes every successor to drop those met
 * before, so only its new values should be hashed: a record keeps its own hash (kept_hash),
 * and the hashes of a wide record's plain tuple items (a state's variables) are remembered by
 * identity, in a cache direct-mapped by address that holds each value it remembers (its id
 * cannot be reused). */
#define XXPRIME_1 ((Py_uhash_t)11400714785074694791ULL)
#define XXPRIME_2 ((Py_uhash_t)14029467366897019727ULL)
#define XXPRIME_5 ((Py_uhash_t)2870177450012600261ULL)
#define XXROTATE(x) ((x << 31) | (x >> 33))
#define WIDE 8                /* records with more items than this: states */
#define HASH_SLOTS (1 << 16)

typedef struct {
    PyObject *value;
    Py_hash_t hash;
} HashSlot;

static HashSlot *HASHES;

static Filled HASHES_FILLED;

static Py_hash_t
item_hash(PyObject *item)
{
    if (Py_TYPE(item) != &PyTuple_Type) /* a record keeps its own hash */
        return PyObject_Hash(item);
    if (HASHES == NULL && (HASHES = PyMem_Calloc(HASH_SLOTS, sizeof(HashSlot))) == NULL) {
        PyErr_NoMemory();
        return -1;
    }
    HashSlot *slot = &HASHES[((uintptr_t)item >> 4) & (HASH_SLOTS - 1)];
    if (slot->value == item)
        return slot->hash;
    Py_hash_t hash = PyObject_Hash(item);
    if (hash == -1)
        return -1;
    if (slot->value == NULL)
        note_filled(&HASHES_FILLED, slot - HASHES);
    Py_INCREF(item);
    Py_XSETREF(slot->value, item);
    slot->hash = hash;
    return hash;
}

/* Where a record keeps its hash once computed (0: not yet), or NULL: the spare item slot after
 * its items. tp_alloc (PyType_GenericAlloc) always allocates one item more than asked and zeroes
 * the object, and a shape (__slots__ = (): no __dict__, no weak references) puts nothing there.
 * A state is hashed again and again (the expanders' dedupe, the sets of the spec's values), and
 * a successor is made of its parent's objects: only its new ones are hashed. */
static Py_hash_t *
kept_hash(PyObject *self)
{
    PyTypeObject *type = Py_TYPE(self);
    if (type->tp_alloc != PyType_GenericAlloc || type->tp_dictoffset != 0 ||
        type->tp_weaklistoffset != 0 || type->tp_basicsize != PyTuple_Type.tp_basicsize ||
        type->tp_itemsize != (Py_ssize_t)sizeof(PyObject *))
        return NULL;
    return (Py_hash_t *)&((PyTupleObject *)self)->ob_item[PyTuple_GET_SIZE(self)];
}

static Py_hash_t
record_hash(PyObject *self)
{
    read_all(self);
    Py_hash_t *kept = kept_hash(self);
    if (kept != NULL && *kept != 0)
        return *kept;
    Py_ssize_t n = PyTuple_GET_SIZE(self);
    int wide = n > WIDE;
    Py_uhash_t acc = XXPRIME_5;
    for (Py_ssize_t i = 0; i < n; i++) {
        PyObject *item = PyTuple_GET_ITEM(self, i);
        Py_uhash_t lane = (Py_uhash_t)(wide ? item_hash(item) : PyObject_Hash(item));
        if (lane == (Py_uhash_t)-1)
            return -1;
        acc += lane * XXPRIME_2;
        acc = XXROTATE(acc);
        acc *= XXPRIME_1;
    }
    acc += n ^ (XXPRIME_5 ^ 3527539UL);
    if (acc == (Py_uhash_t)-1)
        acc = 1546275796;
    if (kept != NULL)
        *kept = (Py_hash_t)acc;
    return (Py_hash_t)acc;
}

static PyObject *record_richcompare(PyObject *a, PyObject *b, int op);

/* a == b for two values of one type, as the tuple's comparison finds it (1, 0, or -1 with an
 * exception), without its calls through the generic comparison for each item: the expanders'
 * dedupe compares equal states built apart, whose records, tuples and sets are walked to the
 * end. Records whose hashes are known and differ are unequal (equal ones hash alike), and so
 * are sets. */
static int
values_equal(PyObject *a, PyObject *b, int depth)
{
    if (a == b)
        return 1;
    PyTypeObject *type = Py_TYPE(a);
    if (type != Py_TYPE(b) || depth > 32)
        return PyObject_RichCompareBool(a, b, Py_EQ);
    if (type->tp_richcompare == record_richcompare) {
        read_all(a);
        read_all(b);
        Py_hash_t *x = kept_hash(a), *y = kept_hash(b);
        if (x != NULL && y != NULL && *x != 0 && *y != 0 && *x != *y)
            return 0;
    } else if (type == &PyFrozenSet_Type) {
        Py_hash_t x = ((PySetObject *)a)->hash, y = ((PySetObject *)b)->hash;
        if (PySet_GET_SIZE(a) != PySet_GET_SIZE(b) || (x != -1 && y != -1 && x != y))
            return 0;
        return PyObject_RichCompareBool(a, b, Py_EQ);
    } else if (type != &PyTuple_Type) {
        return PyObject_RichCompareBool(a, b, Py_EQ);
    }
    Py_ssize_t n = PyTuple_GET_SIZE(a);
    if (n != PyTuple_GET_SIZE(b))
        return 0;
    for (Py_ssize_t i = 0; i < n; i++) {
        PyObject *x = PyTuple_GET_ITEM(a, i), *y = PyTuple_GET_ITEM(b, i);
        int equal = x == y ? 1 : values_equal(x, y, depth + 1); /* (most items are shared) */
        if (equal <= 0)
            return equal;
    }
    return 1;
}

/* ==, <, ...: the tuple's comparison, which reads every field (== and != of two records of
 * one shape: values_equal, the same answer). */
static PyObject *
record_richcompare(PyObject *a, PyObject *b, int op)
{
    if (TRACKED != NULL) {
        read_all(a);
        read_all(b);
    }
    if ((op == Py_EQ || op == Py_NE) && Py_TYPE(a) == Py_TYPE(b)) {
        int equal = values_equal(a, b, 0);
        if (equal < 0)
            return NULL;
        return PyBool_FromLong(op == Py_EQ ? equal : !equal);
    }
    return PyTuple_Type.tp_richcompare(a, b, op);
}

PyTypeObject RecordBase = {
    PyVarObject_HEAD_INIT(NULL, 0)
    .tp_name = "checker._hot.RecordBase",
    .tp_hash = record_hash,
    .tp_richcompare = record_richcompare,
    .tp_itemsize = sizeof(PyObject *),
    .tp_flags = Py_TPFLAGS_DEFAULT | Py_TPFLAGS_BASETYPE,
    .tp_doc = "A tuple whose first item is its shape (checker.values.record.Record).",
    .tp_methods = record_methods,
    .tp_getattro = record_getattro,
    .tp_as_mapping = &record_as_mapping,
    .tp_as_sequence = &record_as_sequence,
    .tp_iter = record_iter,
};


/* Empty the cache of hashes (forget_encodings). */
void
forget_hashes(void)
{
    if (HASHES != NULL) {
        int listed = HASHES_FILLED.count <= FILLED_MAX;
        Py_ssize_t n = listed ? HASHES_FILLED.count : HASH_SLOTS;
        for (Py_ssize_t k = 0; k < n; k++)
            Py_CLEAR(HASHES[listed ? HASHES_FILLED.at[k] : k].value);
        HASHES_FILLED.count = 0;
    }
}
