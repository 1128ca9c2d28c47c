/* checker._hot: the engine's hot path in C, with the same behaviour as the Python twins it
 * replaces (checker.values.record, checker.values.encoding, checker.values.kinds,
 * Model.successors, the expanders' dedupe). checker.values.fast is the one module importing it.
 *
 * - RecordBase: the tuple type every Record shape derives from, with `replace` in C.
 * - new(shape, *values), put(container, key, value), take(shape, indices, record): building
 *   records and tuples.
 * - successors(...): one state's successors, as Model.successors computes them.
 * - candidates(...): the successors not met before (the expanders' exact dedupe).
 * - encode(value): the canonical msgpack encoding, byte for byte that of checker.values.encoding.
 *
 * The Python modules hand over what this module needs (their types, sets and fallbacks) with
 * configure(...) when they are imported (checker.values.fast.configure_records).
 * MC_PURE_PYTHON=1 keeps the module from being used.
 */
#define PY_SSIZE_T_CLEAN
#include <Python.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>
#include <structmember.h>

/* -- what checker.values.record and checker.values.encoding hand over ----------------------- */

static PyObject *FROZEN;      /* set of types replace() and put() take as they are */
static PyObject *ATOMS;       /* set of types Record() takes as they are */
static PyObject *FREEZE;      /* checker.values.record.freeze */
static PyObject *UNKNOWN;     /* checker.values.record._raise_unknown(record, changes): raises */
static PyObject *PUT_SLOW;    /* checker.values.record.put_python (records and maps) */
static PyObject *STATE_ERROR; /* checker.values.record.StateError */
static PyObject *NO_FIELD;    /* checker.values.record._no_field(record, name): AttributeError */
static PyObject *WITHOUT_SLOW; /* checker.values.record.without_python (maps, anything else) */
static PyObject *DROP_PLAN;   /* checker.values.record.drop_plan(shape, keys) -> (shape, indices) */
static PyTypeObject *MAP;     /* checker.values.record.Map */
static PyObject *STR_INDEX;   /* "_index" */
static PyObject *STR_KEYS;    /* "_keys" */
static PyObject *STR_BINDINGS; /* "bindings" */
static PyObject *STR_ORDERED;  /* "ordered" */
static PyObject *STR_DOMAIN_FAILED; /* "domain_failed" */
static PyObject *RECORD;      /* checker.values.record.Record: calling it builds a record */
static PyObject *FACTORY;     /* checker.values.record._factory: Record(...) in Python */
static PyObject *MAKERS;      /* keyword order as written -> (shape, where each field is) */

/* -- reads: which variables spec code reads ------------------------------------------------
 *
 * While a guard or an invariant runs on a state, the engine notes which of the state's
 * variables it reads (docs/architecture.md): each variable is a bit of READS (bit i - 1
 * for the record's item i; the variables from the 63rd on share bit 62), and bit 63 says
 * "disabled" or "held" in the masks the engine keeps. Only records of the state's shape,
 * TRACKED, are noted: a field read through `s.name`, `s["name"]` or `s.get("name")` sets its
 * bit; anything that reads every field (values(), items(), ==, <, hash, encode) sets them
 * all. Reading a variable of another state of the same shape counts too: more bits only make
 * the engine re-evaluate more often. */

static PyTypeObject *TRACKED; /* the states' shape while spec code is watched, else NULL */
static uint64_t READS;        /* the variables read since the engine last cleared it */
#define READ_ALL (~(uint64_t)0 >> 1)
#define MARK ((uint64_t)1 << 63) /* in a kept mask: disabled (an action), held (an invariant) */

static inline uint64_t
bit_of(Py_ssize_t index) /* index: the item's position, from 1 */
{
    return (uint64_t)1 << (index - 1 < 62 ? index - 1 : 62);
}

static inline void
read_all(PyObject *record)
{
    if (Py_TYPE(record) == TRACKED)
        READS = READ_ALL;
}

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

static PyTypeObject FieldType = {
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
static PyObject *
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

static PyTypeObject RecordBase; /* defined below */

/* type(value) in checker.values.record.ATOMS */
static inline int
is_atom(PyObject *value)
{
    PyTypeObject *type = Py_TYPE(value);
    return type == &PyLong_Type || type == &PyUnicode_Type || value == Py_None ||
           type == &PyBool_Type || type == &PyBytes_Type || type == MAP;
}

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

static PyObject *
frozen(PyObject *value, PyObject *kinds)
{
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
    return PyObject_CallOneArg(FREEZE, value);
}

/* A new instance of `type` (a tuple subclass) with room for n items, all NULL. */
static PyObject *
alloc(PyTypeObject *type, Py_ssize_t n)
{
    return type->tp_alloc(type, n);
}

/* A new record of `shape` with room for n fields (all NULL), its shape in item 0. */
static PyObject *
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

static int
is_map(PyObject *self)
{
    return Py_TYPE(self) == MAP;
}

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

/* The slots of a cache by identity filled since it was last emptied (forget_encodings, at
 * the end of each search), so that emptying it costs what the search put there, not a walk
 * over every slot (0.7 M instructions, 7 % of die_hard's search). Past FILLED_MAX of them,
 * every slot is walked. */
#define FILLED_MAX 4096
typedef struct {
    Py_ssize_t count;
    uint32_t at[FILLED_MAX];
} Filled;

static Filled HASHES_FILLED;

static inline void
note_filled(Filled *filled, Py_ssize_t index)
{
    if (filled->count < FILLED_MAX)
        filled->at[filled->count] = (uint32_t)index;
    filled->count++;
}

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

static PyTypeObject RecordBase = {
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

/* -- RecordType: Record(...) ------------------------------------------------------------ */

static PyObject *KEY_TUPLES; /* keys tuple -> itself: the maps Record({...}) built share it */
#define KEY_TUPLES_SIZE 4096

/* The one tuple of a map's key set equal to `tuple` (a new reference; `tuple`'s is taken;
 * NULL with an exception on failure, or if `tuple` is NULL), so that kind_ok sees a map's
 * keys unchanged by their identity. */
static PyObject *
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

/* Record({1: a, 2: b}): the Map of a dict whose keys are all ints (in their natural order,
 * as canonical_order gives it), its values frozen; NULL without an exception for any other
 * dict (the Python factory builds it). */
static PyObject *
int_map(PyObject *dict)
{
    Py_ssize_t n = PyDict_GET_SIZE(dict), pos = 0;
    PyObject *key, *value;
    if (n == 0)
        return NULL;
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
        PyObject *item = PyDict_GetItemWithError(dict, PyList_GET_ITEM(keys, i)); /* borrowed */
        PyObject *got = item == NULL ? NULL : frozen(item, ATOMS);
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
    PyObject *entry = i == n ? PyDict_GetItemWithError(MAKERS, order) : NULL; /* borrowed */
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
    for (Py_ssize_t k = 0; k < n; k++) {
        PyObject *got = frozen(values[PyLong_AsSsize_t(PyTuple_GET_ITEM(where, k))], ATOMS);
        if (got == NULL) {
            Py_DECREF(record);
            return NULL;
        }
        PyTuple_SET_ITEM(record, k + 1, got);
    }
    return record;
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

static PyTypeObject RecordType = {
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
static PyObject *
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

static PyObject *
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
static PyObject *
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
static PyObject *
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
static PyObject *
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
static PyObject *
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

/* -- kinds: checker.values.kinds.conforms_python, in C ------------------------------------- */

/* The tags of checker.values.kinds (a kind is a tuple (tag, a, b)). */
enum { K_ANY, K_INT, K_BOOL, K_STR, K_BYTES, K_NONE, K_OPTIONAL, K_TUPLE, K_FIXED, K_SET,
       K_RECORD, K_MAP, K_ANYRECORD };

/* A small int's value (a kind's tag, an action's arity: read for every value checked), without
 * PyLong_AsLong's general path where the layout of ints is known. */
static inline long
small_long(PyObject *v)
{
#if PY_VERSION_HEX < 0x030C0000
    if (PyLong_CheckExact(v)) {
        Py_ssize_t size = Py_SIZE(v);
        if (size == 0)
            return 0;
        if (size == 1)
            return (long)((PyLongObject *)v)->ob_digit[0];
    }
#endif
    return PyLong_AsLong(v);
}

static long
kind_tag(PyObject *kind)
{
    return small_long(PyTuple_GET_ITEM(kind, 0));
}

/* Whether `value` is of `kind`; `old` (or NULL) is the value it replaces, whose parts that
 * `value` still holds (the same objects) are of their kinds already. As kinds.conforms_python:
 * 1 or 0, never an exception. */
static int
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
static PyObject *
hot_conforms(PyObject *module, PyObject *const *args, Py_ssize_t nargs)
{
    if (nargs != 3 || !PyTuple_Check(args[2])) {
        PyErr_SetString(PyExc_TypeError, "conforms(value, old, kind)");
        return NULL;
    }
    return PyBool_FromLong(kind_ok(args[0], args[1], args[2]));
}

/* -- successors -------------------------------------------------------------------------- */

/* The spec raised in an action: let `reraise(ai, binding, state, exc)` (Model) raise the
 * EvaluationError that names it, or let an interrupt (Ctrl-C, --timeout) go on. Every
 * exception goes there: a SystemExit or a KeyboardInterrupt the spec raises is its error. */
static void
action_raised(PyObject *reraise, PyObject *ai, PyObject *binding, PyObject *state)
{
    PyObject *type, *value, *traceback;
    PyErr_Fetch(&type, &value, &traceback);
    PyErr_NormalizeException(&type, &value, &traceback);
    if (traceback != NULL)
        PyException_SetTraceback(value, traceback);
    PyObject *r = PyObject_CallFunctionObjArgs(reraise, ai, binding, state, value, NULL);
    Py_XDECREF(r);
    Py_XDECREF(type);
    Py_XDECREF(value);
    Py_XDECREF(traceback);
    if (!PyErr_Occurred())
        PyErr_SetString(PyExc_RuntimeError, "an action raised and was not reported");
}

/* An action's list of successors, as Model._add takes it when there are no action
 * constraints: each is checked against the kinds first, then all are taken. Returns 1 (a
 * successor), 0 (an empty list), -1 (error) or -2 when one is not a state of `shape` (the
 * general path then says what is wrong). */
static int
take_list(PyObject *list, PyObject *ai, PyObject *binding, PyObject *state, PyTypeObject *shape,
          PyObject *states, PyObject *actions, PyObject *bindings, PyObject *kinds,
          PyObject *kind_error)
{
    Py_ssize_t n = PyList_GET_SIZE(list);
    for (Py_ssize_t i = 0; i < n; i++)
        if (Py_TYPE(PyList_GET_ITEM(list, i)) != shape)
            return -2;
    for (Py_ssize_t i = 0; i < n; i++) {
        PyObject *succ = PyList_GET_ITEM(list, i);
        if (kinds != Py_None && !kind_ok(succ, state, kinds)) {
            PyObject *r = PyObject_CallFunctionObjArgs(kind_error, ai, binding, state, succ, NULL);
            if (r == NULL)
                return -1;
            Py_DECREF(r);
        }
    }
    for (Py_ssize_t i = 0; i < n; i++) {
        if (PyList_Append(states, PyList_GET_ITEM(list, i)) < 0 || PyList_Append(actions, ai) < 0)
            return -1;
        if (bindings != Py_None && PyList_Append(bindings, binding) < 0)
            return -1;
    }
    return n > 0;
}

/* What to do with an action's result. Returns 1 (enabled), 0 (None) or -1 (error). A
 * successor whose variables are not of their kinds goes to kind_error(ai, binding, state,
 * successor), which raises (or returns, for a list inside a tuple that is frozen later). */
static int
take_result(PyObject *result, PyObject *ai, PyObject *binding, PyObject *state,
            PyTypeObject *shape, int constrained, PyObject *states, PyObject *actions,
            PyObject *bindings, PyObject *general, PyObject *kinds, PyObject *kind_error,
            int kind_known)
{
    if (result == Py_None)
        return 0;
    if (Py_TYPE(result) == shape && !constrained) {
        int fits = kind_known >= 0 ? kind_known : kinds == Py_None || kind_ok(result, state, kinds);
        if (!fits) {
            PyObject *r = PyObject_CallFunctionObjArgs(kind_error, ai, binding, state, result,
                                                       NULL);
            if (r == NULL)
                return -1;
            Py_DECREF(r);
        }
        if (PyList_Append(states, result) < 0 || PyList_Append(actions, ai) < 0)
            return -1;
        if (bindings != Py_None && PyList_Append(bindings, binding) < 0)
            return -1;
        return 1;
    }
    if (PyList_CheckExact(result) && !constrained) {
        int taken = take_list(result, ai, binding, state, shape, states, actions, bindings,
                              kinds, kind_error);
        if (taken != -2)
            return taken;
    }
    PyObject *r = PyObject_CallFunctionObjArgs(
        general, ai, binding, state, result, states, actions, bindings, NULL);
    if (r == NULL)
        return -1;
    int enabled = PyObject_IsTrue(r);
    Py_DECREF(r);
    return enabled;
}

/* successors(plan, state, states, actions, bindings, general, reraise, constrained, kinds,
 *            kind_error) -> enabled
 *
 * As Model.successors: plan is Model._plan, a tuple of (action index, bound function, arity,
 * static bindings or None, Action); bindings a list or None; general is Model._add, reraise
 * Model._reraise; constrained whether there are action constraints; kinds the states' kind
 * (checker.values.kinds) or None, kind_error Model._kind_error. */
/* Incremental evaluation (docs/architecture.md): `memo` has, per slot (an action's
 * binding from a fixed domain, in the plan's order), the parent's mask: MARK and the variables
 * the binding's guard read if it was disabled there, else 0; `changed` the variables that
 * differ between the parent and this state. A binding disabled in the parent whose guard read
 * none of the changed variables computes the same here: it is disabled, and not called. `out`
 * gets this state's masks. */
static inline int
still_disabled(const char *memo, uint64_t changed, char *out, Py_ssize_t slot)
{
    uint64_t was = 0;
    if (memo != NULL)
        memcpy(&was, memo + 8 * slot, 8);
    if (!(was & MARK) || (was & changed))
        return 0;
    memcpy(out + 8 * slot, &was, 8);
    return 1;
}

static inline void
note_reads(char *out, Py_ssize_t slot, PyObject *result)
{
    int disabled = result == Py_None || (result != NULL && PyList_CheckExact(result) &&
                                         PyList_GET_SIZE(result) == 0);
    uint64_t mask = disabled ? (READS | MARK) : 0;
    memcpy(out + 8 * slot, &mask, 8);
}

/* A one-parameter action's values in `state`, as Action.values gives them: `domain(state)` in
 * canonical order. A tuple is its own order (up to checker.compiled.MAX_DOMAIN values); a
 * frozenset's order is computed once per set object (the same message set is the domain in
 * many states: the set is held while cached, so its address is not reused); anything else,
 * or a set not cached, goes to Action.ordered. What the domain raises goes to
 * Action.domain_failed, which raises the error naming the action and the state. */
#define MAX_DOMAIN 1000000
#define ORDER_SLOTS 512
typedef struct {
    PyObject *set;
    PyObject *order;
} OrderSlot;
static OrderSlot *ORDERS;

static PyObject *
domain_values(PyObject *act, PyObject *domain, PyObject *state)
{
    PyObject *found = PyObject_CallOneArg(domain, state);
    if (found == NULL) {
        PyObject *type, *value, *traceback;
        PyErr_Fetch(&type, &value, &traceback);
        PyErr_NormalizeException(&type, &value, &traceback);
        if (traceback != NULL)
            PyException_SetTraceback(value, traceback);
        PyObject *raised = PyObject_CallMethodObjArgs(act, STR_DOMAIN_FAILED, state, value, NULL);
        Py_XDECREF(type);
        Py_XDECREF(value);
        Py_XDECREF(traceback);
        if (raised != NULL) { /* (it always raises) */
            Py_DECREF(raised);
            PyErr_SetString(PyExc_SystemError, "Action.domain_failed returned");
        }
        return NULL;
    }
    if (PyTuple_CheckExact(found) && PyTuple_GET_SIZE(found) <= MAX_DOMAIN)
        return found;
    OrderSlot *slot = NULL;
    if (PyFrozenSet_CheckExact(found)) {
        if (PySet_GET_SIZE(found) == 0) {
            Py_DECREF(found);
            return PyTuple_New(0);
        }
        if (ORDERS == NULL && (ORDERS = PyMem_Calloc(ORDER_SLOTS, sizeof(OrderSlot))) == NULL) {
            Py_DECREF(found);
            return PyErr_NoMemory();
        }
        slot = &ORDERS[((uintptr_t)found >> 4) & (ORDER_SLOTS - 1)];
        if (slot->set == found) {
            Py_DECREF(found);
            Py_INCREF(slot->order);
            return slot->order;
        }
    }
    PyObject *order = PyObject_CallMethodObjArgs(act, STR_ORDERED, state, found, NULL);
    if (order != NULL && !PyTuple_CheckExact(order)) {
        Py_SETREF(order, NULL);
        PyErr_SetString(PyExc_SystemError, "Action.ordered returned no tuple");
    }
    if (order != NULL && slot != NULL) {
        Py_XSETREF(slot->set, found); /* (the reference taken by the call) */
        Py_INCREF(order);
        Py_XSETREF(slot->order, order);
        return order;
    }
    Py_DECREF(found);
    return order;
}

static PyObject *
successors_loop(PyObject *const *args, const char *memo, uint64_t changed, char *out,
                Py_ssize_t slots)
{
    PyObject *plan = args[0], *state = args[1], *states = args[2], *actions = args[3];
    PyObject *bindings_out = args[4], *general = args[5], *reraise = args[6];
    int constrained = PyObject_IsTrue(args[7]);
    PyObject *kinds = args[8], *kind_error = args[9];
    int recording = bindings_out != Py_None;
    if (kinds != Py_None && !PyTuple_Check(kinds)) {
        PyErr_SetString(PyExc_TypeError, "successors(): kinds is a tuple or None");
        return NULL;
    }
    if (!PyTuple_CheckExact(plan) || !PyList_CheckExact(states) || !PyList_CheckExact(actions)) {
        PyErr_SetString(PyExc_TypeError, "successors(): bad arguments");
        return NULL;
    }
    PyTypeObject *shape = Py_TYPE(state);
    int enabled = 0;
    Py_ssize_t slot = 0;
    Py_ssize_t entries = PyTuple_GET_SIZE(plan);
    for (Py_ssize_t e = 0; e < entries; e++) {
        PyObject *entry = PyTuple_GET_ITEM(plan, e);
        if (!PyTuple_CheckExact(entry) || PyTuple_GET_SIZE(entry) != 6) {
            PyErr_SetString(PyExc_TypeError, "successors(): a plan entry is a tuple of 6");
            return NULL;
        }
        PyObject *ai = PyTuple_GET_ITEM(entry, 0);
        PyObject *fn = PyTuple_GET_ITEM(entry, 1);
        long arity = small_long(PyTuple_GET_ITEM(entry, 2));
        PyObject *fixed = PyTuple_GET_ITEM(entry, 3);
        PyObject *act = PyTuple_GET_ITEM(entry, 4);
        /* A bound method: call its function with (spec, state, *binding), no allocation. */
        PyObject *func = fn, *self = NULL;
        if (PyMethod_Check(fn)) {
            func = PyMethod_GET_FUNCTION(fn);
            self = PyMethod_GET_SELF(fn);
        }
        PyObject *bindings; /* new reference */
        if (fixed != Py_None) {
            bindings = fixed;
            Py_INCREF(bindings);
        } else if (arity == 1) { /* a one-parameter action's values in this state */
            bindings = domain_values(act, PyTuple_GET_ITEM(entry, 5), state);
            if (bindings == NULL)
                return NULL;
        } else { /* the bindings in this state */
            PyObject *found = PyObject_CallMethodOneArg(act, STR_BINDINGS, state);
            if (found == NULL)
                return NULL;
            bindings = PySequence_Tuple(found);
            Py_DECREF(found);
            if (bindings == NULL)
                return NULL;
        }
        if (arity == 0) {
            Py_DECREF(bindings);
            if (out != NULL && still_disabled(memo, changed, out, slot++))
                continue;
            PyObject *argv[3] = {NULL, self, state};
            PyObject **start = self ? argv + 1 : argv + 2;
            size_t count = self ? 2 : 1;
            READS = 0;
            PyObject *result = PyObject_Vectorcall(
                func, start, count | PY_VECTORCALL_ARGUMENTS_OFFSET, NULL);
            if (out != NULL)
                note_reads(out, slot - 1, result);
            PyObject *none = PyTuple_New(0);
            if (none == NULL) {
                Py_XDECREF(result);
                return NULL;
            }
            if (result == NULL) {
                action_raised(reraise, ai, none, state);
                Py_DECREF(none);
                return NULL;
            }
            int r = take_result(result, ai, none, state, shape, constrained, states, actions,
                                bindings_out, general, kinds, kind_error, -1);
            Py_DECREF(result);
            Py_DECREF(none);
            if (r < 0)
                return NULL;
            enabled |= r;
            continue;
        }
        Py_ssize_t count = PyTuple_GET_SIZE(bindings);
        int slotted = out != NULL && fixed != Py_None; /* the bindings are the same in every state */
        for (Py_ssize_t b = 0; b < count; b++) {
            if (slotted && still_disabled(memo, changed, out, slot++))
                continue;
            PyObject *binding = PyTuple_GET_ITEM(bindings, b);
            PyObject *argv[16];
            Py_ssize_t argc;
            PyObject *one = NULL; /* (value,) for a one-parameter action, made when needed */
            if (arity == 1) {
                PyObject *value = binding;
                argv[1] = self;
                argv[2] = state;
                argv[3] = value;
                argc = 3;
                binding = NULL;
                one = value;
            } else {
                Py_ssize_t size = PyTuple_GET_SIZE(binding);
                if (size > 12) {
                    PyErr_SetString(PyExc_ValueError, "an action takes at most 12 parameters");
                    Py_DECREF(bindings);
                    return NULL;
                }
                argv[1] = self;
                argv[2] = state;
                for (Py_ssize_t p = 0; p < size; p++)
                    argv[3 + p] = PyTuple_GET_ITEM(binding, p);
                argc = 2 + size;
            }
            PyObject **start = self ? argv + 1 : argv + 2;
            size_t given = self ? (size_t)argc : (size_t)argc - 1;
            READS = 0;
            PyObject *result = PyObject_Vectorcall(
                func, start, given | PY_VECTORCALL_ARGUMENTS_OFFSET, NULL);
            if (slotted)
                note_reads(out, slot - 1, result);
            PyObject *made = NULL;
            int fits = -1; /* of the successor's kinds: -1 not known (not the common case) */
            if (result != NULL && result != Py_None && Py_TYPE(result) == shape && !constrained)
                fits = kinds == Py_None || kind_ok(result, state, kinds);
            if (binding == NULL && (result == NULL || (result != Py_None &&
                    (recording || Py_TYPE(result) != shape || constrained || fits == 0)))) {
                made = PyTuple_Pack(1, one);
                if (made == NULL) {
                    Py_XDECREF(result);
                    Py_DECREF(bindings);
                    return NULL;
                }
                binding = made;
            }
            if (result == NULL) {
                action_raised(reraise, ai, binding, state);
                Py_XDECREF(made);
                Py_DECREF(bindings);
                return NULL;
            }
            int r = take_result(result, ai, binding, state, shape, constrained, states, actions,
                                bindings_out, general, kinds, kind_error, fits);
            Py_DECREF(result);
            Py_XDECREF(made);
            if (r < 0) {
                Py_DECREF(bindings);
                return NULL;
            }
            enabled |= r;
        }
        Py_DECREF(bindings);
    }
    if (out != NULL && slot != slots) {
        PyErr_SetString(PyExc_RuntimeError, "successors(): the plan's slots changed");
        return NULL;
    }
    return PyBool_FromLong(enabled);
}


/* successors(plan, state, states, actions, bindings, general, reraise, constrained, kinds,
 *            kind_error[, memo, changed, out]) -> enabled
 *
 * As Model.successors: plan is Model._plan, a tuple of (action index, bound function, arity,
 * static bindings or None, Action); bindings a list or None; general is Model._add, reraise
 * Model._reraise; constrained whether there are action constraints; kinds the states' kind
 * (checker.values.kinds) or None, kind_error Model._kind_error. With `out` (a bytearray of 8
 * bytes per slot), the guards' reads are noted there and `memo` (bytes, or None), `changed`
 * (int) skip the bindings that are still disabled (see still_disabled). */
static PyObject *
hot_successors(PyObject *module, PyObject *const *args, Py_ssize_t nargs)
{
    if (nargs != 10 && nargs != 13) {
        PyErr_SetString(PyExc_TypeError, "successors() takes 10 or 13 arguments");
        return NULL;
    }
    if (nargs == 10 || args[12] == Py_None)
        return successors_loop(args, NULL, 0, NULL, 0);
    PyObject *memo = args[10], *out = args[12];
    if (!PyByteArray_Check(out) || (memo != Py_None && (!PyBytes_Check(memo) ||
                                    PyBytes_GET_SIZE(memo) < PyByteArray_GET_SIZE(out)))) {
        PyErr_SetString(PyExc_TypeError, "successors(): memo is bytes, out a bytearray");
        return NULL;
    }
    uint64_t changed = PyLong_AsUnsignedLongLongMask(args[11]);
    if (changed == (uint64_t)-1 && PyErr_Occurred())
        return NULL;
    PyTypeObject *watched = TRACKED;
    TRACKED = Py_TYPE(args[1]);
    PyObject *r = successors_loop(args, memo == Py_None ? NULL : PyBytes_AS_STRING(memo), changed,
                                  PyByteArray_AS_STRING(out), PyByteArray_GET_SIZE(out) / 8);
    TRACKED = watched;
    return r;
}

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

/* holds(predicates, state, memo, changed, out) -> -1 if every predicate holds on `state`, else
 * the index of the first that does not: returned anything but True, or raised (the error is
 * dropped: the caller evaluates that one again, which says why). An invariant that held in
 * the parent (MARK in `memo`) and read none of the `changed` variables holds here too and is
 * not called. `out` (a bytearray, 8 bytes per predicate) gets MARK and the variables each
 * read, for those that held. */
static PyObject *
hot_holds(PyObject *module, PyObject *const *args, Py_ssize_t nargs)
{
    if (nargs != 5 || !PyTuple_Check(args[0]) || !PyByteArray_Check(args[4]) ||
        (args[2] != Py_None && !PyBytes_Check(args[2]))) {
        PyErr_SetString(PyExc_TypeError, "holds(predicates, state, memo, changed, out)");
        return NULL;
    }
    PyObject *predicates = args[0], *state = args[1], *memo = args[2], *out = args[4];
    Py_ssize_t n = PyTuple_GET_SIZE(predicates);
    if (PyByteArray_GET_SIZE(out) < 8 * n || (memo != Py_None && PyBytes_GET_SIZE(memo) < 8 * n)) {
        PyErr_SetString(PyExc_ValueError, "holds(): 8 bytes per predicate");
        return NULL;
    }
    uint64_t changed = PyLong_AsUnsignedLongLongMask(args[3]);
    if (changed == (uint64_t)-1 && PyErr_Occurred())
        return NULL;
    const char *before = memo == Py_None ? NULL : PyBytes_AS_STRING(memo);
    Py_ssize_t failed = holds_core(predicates, state, before, changed, PyByteArray_AS_STRING(out));
    return failed == -2 ? NULL : PyLong_FromSsize_t(failed);
}

/* A memo (checker.model.Memo, a tuple of 3) of type `type`, made as tuple.__new__ makes one.
 * Steals no reference. */
static PyObject *
new_memo(PyTypeObject *type, PyObject *parent, PyObject *changed, PyObject *invariants)
{
    PyObject *memo = type->tp_alloc(type, 3);
    if (memo == NULL)
        return NULL;
    Py_INCREF(parent);
    Py_INCREF(changed);
    Py_INCREF(invariants);
    PyTuple_SET_ITEM(memo, 0, parent);
    PyTuple_SET_ITEM(memo, 1, changed);
    PyTuple_SET_ITEM(memo, 2, invariants);
    return memo;
}

static int
memo_type_ok(PyObject *type)
{
    if (PyType_Check(type) && PyType_IsSubtype((PyTypeObject *)type, &PyTuple_Type) &&
        ((PyTypeObject *)type)->tp_basicsize == PyTuple_Type.tp_basicsize)
        return 1;
    PyErr_SetString(PyExc_TypeError, "the memo type must be a NamedTuple");
    return 0;
}

/* verdicts(predicates, states, memos, Memo) -> (failing, memos): holds() on each state with
 * its memo (a Memo: the parent's masks, the variables changed, the invariants' masks in the
 * parent or None). `failing`: [index, predicate] for each state on which one did not hold;
 * `memos`: a new list, each state's memo with its own invariants' masks instead. The memos
 * given are not changed (a caller that falls back to evaluating one by one still has them). */
static PyObject *
hot_verdicts(PyObject *module, PyObject *const *args, Py_ssize_t nargs)
{
    if (nargs != 4 || !PyTuple_Check(args[0]) || !PyList_Check(args[1]) ||
        !PyList_Check(args[2]) || PyList_GET_SIZE(args[1]) != PyList_GET_SIZE(args[2])) {
        PyErr_SetString(PyExc_TypeError, "verdicts(predicates, states, memos, Memo)");
        return NULL;
    }
    if (!memo_type_ok(args[3]))
        return NULL;
    PyObject *predicates = args[0], *states = args[1], *memos = args[2];
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
        PyObject *memo = PyList_GET_ITEM(memos, k);
        if (!PyTuple_Check(memo) || PyTuple_GET_SIZE(memo) != 3) {
            PyErr_SetString(PyExc_TypeError, "verdicts(): a memo is a Memo");
            goto error;
        }
        PyObject *held = PyTuple_GET_ITEM(memo, 2);
        if (held != Py_None && (!PyBytes_Check(held) || PyBytes_GET_SIZE(held) < 8 * n)) {
            PyErr_SetString(PyExc_ValueError, "verdicts(): 8 bytes per predicate");
            goto error;
        }
        uint64_t changed = PyLong_AsUnsignedLongLongMask(PyTuple_GET_ITEM(memo, 1));
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
            new_memo(type, PyTuple_GET_ITEM(memo, 0), PyTuple_GET_ITEM(memo, 1), own);
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

/* Append to the list `out`, for each of states[start:], Memo(masks, changed(parent, state),
 * held); -1 on an error. */
static int
append_memos(PyTypeObject *type, PyObject *parent, PyObject *states, Py_ssize_t start,
             PyObject *masks, PyObject *held, PyObject *out)
{
    Py_ssize_t width = PyTuple_GET_SIZE(parent);
    for (Py_ssize_t k = start < 0 ? 0 : start; k < PyList_GET_SIZE(states); k++) {
        PyObject *state = PyList_GET_ITEM(states, k);
        if (!PyTuple_Check(state) || PyTuple_GET_SIZE(state) != width) {
            PyErr_SetString(PyExc_TypeError, "memos_of(): states of the parent's shape");
            return -1;
        }
        PyObject *bits = PyLong_FromUnsignedLongLong(changed_bits(parent, state));
        if (bits == NULL)
            return -1;
        PyObject *memo = new_memo(type, masks, bits, held);
        Py_DECREF(bits);
        if (memo == NULL || PyList_Append(out, memo) < 0) {
            Py_XDECREF(memo);
            return -1;
        }
        Py_DECREF(memo);
    }
    return 0;
}

/* memos_of(Memo, parent, states, start, masks, held, out): appends to the list `out`, for each of
 * states[start:], Memo(masks, changed(parent, state), held): what expand_batch keeps with a
 * candidate (the parent's guards' masks, what the step changed, the parent's invariants'). */
static PyObject *
hot_memos_of(PyObject *module, PyObject *const *args, Py_ssize_t nargs)
{
    if (nargs != 7 || !PyTuple_Check(args[1]) || !PyList_Check(args[2]) ||
        !PyList_Check(args[6])) {
        PyErr_SetString(PyExc_TypeError, "memos_of(Memo, parent, states, start, masks, held, out)");
        return NULL;
    }
    if (!memo_type_ok(args[0]))
        return NULL;
    PyTypeObject *type = (PyTypeObject *)args[0];
    PyObject *parent = args[1], *states = args[2], *out = args[6];
    Py_ssize_t start = PyLong_AsSsize_t(args[3]);
    if (start == -1 && PyErr_Occurred())
        return NULL;
    if (append_memos(type, parent, states, start, args[4], args[5], out) < 0)
        return NULL;
    Py_RETURN_NONE;
}

/* changed(parent, state) -> the variables (bits, as in READS) whose values are not the same
 * objects in the two states: an unchanged variable is shared with the parent. */
static PyObject *
hot_changed(PyObject *module, PyObject *const *args, Py_ssize_t nargs)
{
    if (nargs != 2 || !PyTuple_Check(args[0]) || !PyTuple_Check(args[1]) ||
        PyTuple_GET_SIZE(args[0]) != PyTuple_GET_SIZE(args[1])) {
        PyErr_SetString(PyExc_TypeError, "changed(parent, state): two states of one shape");
        return NULL;
    }
    return PyLong_FromUnsignedLongLong(changed_bits(args[0], args[1]));
}

/* candidates(successors, start, seen, found, positions, offset, parent) -> None or the index
 * of a successor that cannot be hashed (the caller freezes it and calls again from there).
 * The successors from `start` on that are not in `seen` are added to it and to `found`,
 * their indices plus `offset` to `positions`; a successor that is `parent` itself (a step
 * that changed nothing) is never new, and is passed over without a look-up. */
static PyObject *
hot_candidates(PyObject *module, PyObject *const *args, Py_ssize_t nargs)
{
    if (nargs != 7) {
        PyErr_SetString(PyExc_TypeError, "candidates() takes 7 arguments");
        return NULL;
    }
    PyObject *successors = args[0], *seen = args[2], *found = args[3], *positions = args[4];
    PyObject *parent = args[6];
    Py_ssize_t start = PyLong_AsSsize_t(args[1]);
    if (start == -1 && PyErr_Occurred())
        return NULL;
    Py_ssize_t offset = PyLong_AsSsize_t(args[5]);
    if (offset == -1 && PyErr_Occurred())
        return NULL;
    Py_ssize_t n = PyList_GET_SIZE(successors);
    for (Py_ssize_t i = start; i < n; i++) {
        PyObject *succ = PyList_GET_ITEM(successors, i);
        if (succ == parent)
            continue;
        /* One lookup, so one hash (a tuple does not keep its hash): adding a state met
         * before leaves the set's size as it was. */
        Py_ssize_t before = PySet_GET_SIZE(seen);
        if (PySet_Add(seen, succ) < 0) {
            if (PyErr_ExceptionMatches(PyExc_TypeError)) {
                PyErr_Clear();
                return PyLong_FromSsize_t(i);
            }
            return NULL;
        }
        if (PySet_GET_SIZE(seen) == before)
            continue;
        PyObject *position = PyLong_FromSsize_t(offset + i);
        if (position == NULL || PyList_Append(found, succ) < 0 ||
            PyList_Append(positions, position) < 0) {
            Py_XDECREF(position);
            return NULL;
        }
        Py_DECREF(position);
    }
    Py_RETURN_NONE;
}

/* -- encode ---------------------------------------------------------------------------- */

typedef struct {
    char *data;
    Py_ssize_t size, capacity;
} Buffer;

static int
grow(Buffer *b, Py_ssize_t more)
{
    if (b->size + more <= b->capacity)
        return 0;
    Py_ssize_t capacity = b->capacity ? b->capacity : 256;
    while (capacity < b->size + more)
        capacity *= 2;
    char *data = PyMem_Realloc(b->data, capacity);
    if (data == NULL) {
        PyErr_NoMemory();
        return -1;
    }
    b->data = data;
    b->capacity = capacity;
    return 0;
}

static int
put_bytes(Buffer *b, const void *bytes, Py_ssize_t n)
{
    if (grow(b, n) < 0)
        return -1;
    memcpy(b->data + b->size, bytes, n);
    b->size += n;
    return 0;
}

static int
put_byte(Buffer *b, unsigned char c)
{
    return put_bytes(b, &c, 1);
}

static int
put_be(Buffer *b, unsigned char head, uint64_t value, int width)
{
    unsigned char out[9];
    out[0] = head;
    for (int i = 0; i < width; i++)
        out[1 + i] = (unsigned char)(value >> (8 * (width - 1 - i)));
    return put_bytes(b, out, 1 + width);
}

/* A container's header, as msgpack-python writes it. */
static int
put_header(Buffer *b, Py_ssize_t n, unsigned char fix, int fixlimit, unsigned char h16,
           unsigned char h32)
{
    if (n < fixlimit)
        return put_byte(b, (unsigned char)(fix | n));
    if (n < 65536)
        return put_be(b, h16, (uint64_t)n, 2);
    return put_be(b, h32, (uint64_t)n, 4);
}

static int
put_int(Buffer *b, PyObject *value)
{
    int overflow = 0;
    long long v = PyLong_AsLongLongAndOverflow(value, &overflow);
    if (overflow > 0) {
        unsigned long long u = PyLong_AsUnsignedLongLong(value);
        if (u == (unsigned long long)-1 && PyErr_Occurred()) {
            PyErr_Clear();
            PyErr_Format(STATE_ERROR, "cannot encode %R: integers must fit in 64 bits", value);
            return -1;
        }
        return put_be(b, 0xcf, u, 8);
    }
    if (overflow < 0) {
        PyErr_Format(STATE_ERROR, "cannot encode %R: integers must fit in 64 bits", value);
        return -1;
    }
    if (v == -1 && PyErr_Occurred())
        return -1;
    if (v < -(1LL << 5)) {
        if (v < -(1LL << 15)) {
            if (v < -(1LL << 31))
                return put_be(b, 0xd3, (uint64_t)v, 8);
            return put_be(b, 0xd2, (uint64_t)v, 4);
        }
        if (v < -(1 << 7))
            return put_be(b, 0xd1, (uint64_t)v, 2);
        return put_be(b, 0xd0, (uint64_t)v, 1);
    }
    if (v < (1 << 7))
        return put_byte(b, (unsigned char)(signed char)v);
    if (v < (1 << 8))
        return put_be(b, 0xcc, (uint64_t)v, 1);
    if (v < (1 << 16))
        return put_be(b, 0xcd, (uint64_t)v, 2);
    if (v < (1LL << 32))
        return put_be(b, 0xce, (uint64_t)v, 4);
    return put_be(b, 0xcf, (uint64_t)v, 8);
}

static int put_value(Buffer *b, PyObject *value, int depth);
static int put_nested(Buffer *b, PyObject *value, int depth);
static PyObject *hot_encode(PyObject *module, PyObject *value);

typedef struct {
    Py_ssize_t start, size;
    const char *base; /* set after the element buffer stops moving */
} Span;

static int
compare_spans(const void *x, const void *y)
{
    const Span *a = x, *b = y;
    Py_ssize_t n = a->size < b->size ? a->size : b->size;
    int c = memcmp(a->base + a->start, b->base + b->start, (size_t)n);
    if (c != 0)
        return c;
    return (a->size > b->size) - (a->size < b->size);
}

/* A frozenset: extension 1 holding an array of its elements' encodings, sorted. */
static int
put_set(Buffer *b, PyObject *set, int depth)
{
    Py_ssize_t n = PySet_GET_SIZE(set);
    Buffer elements = {NULL, 0, 0};
    Span *spans = PyMem_Malloc(sizeof(Span) * (n ? n : 1));
    if (spans == NULL) {
        PyErr_NoMemory();
        return -1;
    }
    Py_ssize_t i = 0;
    PyObject *item;
    int status = -1;
    PyObject *iterator = PyObject_GetIter(set);
    if (iterator == NULL)
        goto done;
    while (i < n && (item = PyIter_Next(iterator)) != NULL) {
        spans[i].start = elements.size;
        int failed = put_nested(&elements, item, depth + 1) < 0;
        Py_DECREF(item);
        if (failed) {
            Py_DECREF(iterator);
            goto done;
        }
        spans[i].size = elements.size - spans[i].start;
        i++;
    }
    Py_DECREF(iterator);
    if (PyErr_Occurred())
        goto done;
    for (Py_ssize_t k = 0; k < n; k++)
        spans[k].base = elements.data;
    qsort(spans, (size_t)n, sizeof(Span), compare_spans);
    Buffer payload = {NULL, 0, 0};
    if (put_header(&payload, n, 0x90, 16, 0xdc, 0xdd) < 0)
        goto payload_done;
    for (Py_ssize_t k = 0; k < n; k++)
        if (put_bytes(&payload, elements.data + spans[k].start, spans[k].size) < 0)
            goto payload_done;
    Py_ssize_t size = payload.size;
    int fixed = size == 1 ? 0xd4 : size == 2 ? 0xd5 : size == 4 ? 0xd6 : size == 8 ? 0xd7
                : size == 16 ? 0xd8 : 0;
    if (fixed) {
        if (put_byte(b, (unsigned char)fixed) < 0)
            goto payload_done;
    } else if (size < 256) {
        if (put_be(b, 0xc7, (uint64_t)size, 1) < 0)
            goto payload_done;
    } else if (size < 65536) {
        if (put_be(b, 0xc8, (uint64_t)size, 2) < 0)
            goto payload_done;
    } else if (put_be(b, 0xc9, (uint64_t)size, 4) < 0) {
        goto payload_done;
    }
    if (put_byte(b, 1) < 0 || put_bytes(b, payload.data, size) < 0)
        goto payload_done;
    status = 0;
payload_done:
    PyMem_Free(payload.data);
done:
    PyMem_Free(elements.data);
    PyMem_Free(spans);
    return status;
}

static int
put_map(Buffer *b, PyObject *keys, PyObject *values, Py_ssize_t offset, int depth)
{
    Py_ssize_t n = PyTuple_GET_SIZE(keys);
    if (put_header(b, n, 0x80, 16, 0xde, 0xdf) < 0)
        return -1;
    for (Py_ssize_t i = 0; i < n; i++) {
        if (put_value(b, PyTuple_GET_ITEM(keys, i), depth + 1) < 0 ||
            put_nested(b, PyTuple_GET_ITEM(values, offset + i), depth + 1) < 0)
            return -1;
    }
    return 0;
}

static int
refuse(PyObject *value)
{
    if (PyFloat_Check(value))
        PyErr_Format(STATE_ERROR, "floats cannot be part of a state (got %R); use ints", value);
    else
        PyErr_Format(STATE_ERROR, "a %s cannot be part of a state (got %R)",
                     Py_TYPE(value)->tp_name, value);
    return -1;
}

static int
put_value(Buffer *b, PyObject *value, int depth)
{
    if (depth > 500) {
        PyErr_SetString(STATE_ERROR, "a state value nested deeper than 500 levels");
        return -1;
    }
    PyTypeObject *type = Py_TYPE(value);
    if (value == Py_None)
        return put_byte(b, 0xc0);
    if (value == Py_True)
        return put_byte(b, 0xc3);
    if (value == Py_False)
        return put_byte(b, 0xc2);
    if (type == &PyLong_Type)
        return put_int(b, value);
    if (type == &PyUnicode_Type) {
        Py_ssize_t n;
        const char *text = PyUnicode_AsUTF8AndSize(value, &n);
        if (text == NULL) {
            if (PyErr_ExceptionMatches(PyExc_UnicodeEncodeError)) {
                PyErr_Clear();  /* a lone surrogate: as encoding.py's _unencodable_text says */
                PyErr_Format(STATE_ERROR,
                             "a str that is not valid Unicode text (a lone surrogate) cannot be"
                             " part of a state (got %R)",
                             value);
            }
            return -1;
        }
        int status;
        if (n < 32)
            status = put_byte(b, (unsigned char)(0xa0 | n));
        else if (n < 256)
            status = put_be(b, 0xd9, (uint64_t)n, 1);
        else if (n < 65536)
            status = put_be(b, 0xda, (uint64_t)n, 2);
        else
            status = put_be(b, 0xdb, (uint64_t)n, 4);
        return status < 0 ? -1 : put_bytes(b, text, n);
    }
    if (type == &PyTuple_Type) {
        Py_ssize_t n = PyTuple_GET_SIZE(value);
        if (put_header(b, n, 0x90, 16, 0xdc, 0xdd) < 0)
            return -1;
        for (Py_ssize_t i = 0; i < n; i++)
            if (put_nested(b, PyTuple_GET_ITEM(value, i), depth + 1) < 0)
                return -1;
        return 0;
    }
    if (type == &PyFrozenSet_Type)
        return put_set(b, value, depth);
    if (type == &PyBytes_Type) {
        Py_ssize_t n = PyBytes_GET_SIZE(value);
        int status;
        if (n < 256)
            status = put_be(b, 0xc4, (uint64_t)n, 1);
        else if (n < 65536)
            status = put_be(b, 0xc5, (uint64_t)n, 2);
        else
            status = put_be(b, 0xc6, (uint64_t)n, 4);
        return status < 0 ? -1 : put_bytes(b, PyBytes_AS_STRING(value), n);
    }
    if (PyType_IsSubtype(type, &RecordBase)) {
        if (type == MAP)
            return put_map(b, PyTuple_GET_ITEM(value, 1), PyTuple_GET_ITEM(value, 2), 0, depth);
        PyObject *keys = _PyType_Lookup(type, STR_KEYS); /* borrowed */
        if (keys == NULL || !PyTuple_CheckExact(keys) ||
            PyTuple_GET_SIZE(keys) + 1 != PyTuple_GET_SIZE(value)) {
            PyErr_Format(STATE_ERROR, "a %s with no field names", type->tp_name);
            return -1;
        }
        return put_map(b, keys, value, 1, depth);
    }
    return refuse(value);
}

/* encode_state(state): encode(state), for the states an engine meets. A successor shares
 * its unchanged field values (the same objects) with its parent, so the encoding of each
 * field value that is a container is cached by the value's identity (the cache holds the
 * value, so that its address is not reused while it is there); and so is that of each
 * container nested inside one (put_nested), since a step that changes one broker's entry of
 * a map, or adds a message to a set, keeps the other entries. Measured with callgrind on
 * kip966's shipped cfg, 80,000 states: -9.6 % instructions (storing only encodings of 16
 * bytes or more: less gain; 2^17 slots: less gain); TwoPhase RM=6: +0.4 %. */
typedef struct {
    PyObject *value; /* held, so that its address is not reused while it is here */
    PyObject *data;  /* its encoding (bytes) */
} FieldSlot;

static FieldSlot *FIELDS; /* direct-mapped by the value's address */
#define FIELD_SLOTS (1 << 16)
static Filled FIELDS_FILLED;

static int
put_cached(Buffer *b, PyObject *value, int depth)
{
    FieldSlot *slot = &FIELDS[((uintptr_t)value >> 4) & (FIELD_SLOTS - 1)];
    if (slot->value == value)
        return put_bytes(b, PyBytes_AS_STRING(slot->data), PyBytes_GET_SIZE(slot->data));
    Py_ssize_t start = b->size;
    if (put_value(b, value, depth) < 0)
        return -1;
    PyObject *data = PyBytes_FromStringAndSize(b->data + start, b->size - start);
    if (data == NULL)
        return -1;
    if (slot->value == NULL)
        note_filled(&FIELDS_FILLED, slot - FIELDS);
    Py_INCREF(value);
    Py_XSETREF(slot->value, value);
    Py_XSETREF(slot->data, data);
    return 0;
}

/* forget_encodings(): empty the caches by identity (the encodings of fields, the hashes of
 * tuples, the orders of domains), dropping the values they hold. */
static PyObject *
hot_forget_encodings(PyObject *module, PyObject *unused)
{
    if (FIELDS != NULL) {
        int listed = FIELDS_FILLED.count <= FILLED_MAX;
        Py_ssize_t n = listed ? FIELDS_FILLED.count : FIELD_SLOTS;
        for (Py_ssize_t k = 0; k < n; k++) {
            FieldSlot *slot = &FIELDS[listed ? FIELDS_FILLED.at[k] : k];
            Py_CLEAR(slot->value);
            Py_CLEAR(slot->data);
        }
        FIELDS_FILLED.count = 0;
    }
    if (HASHES != NULL) {
        int listed = HASHES_FILLED.count <= FILLED_MAX;
        Py_ssize_t n = listed ? HASHES_FILLED.count : HASH_SLOTS;
        for (Py_ssize_t k = 0; k < n; k++)
            Py_CLEAR(HASHES[listed ? HASHES_FILLED.at[k] : k].value);
        HASHES_FILLED.count = 0;
    }
    if (ORDERS != NULL) {
        for (Py_ssize_t i = 0; i < ORDER_SLOTS; i++) {
            Py_CLEAR(ORDERS[i].set);
            Py_CLEAR(ORDERS[i].order);
        }
    }
    Py_RETURN_NONE;
}

static int
is_container(PyTypeObject *type)
{
    return type == &PyTuple_Type || type == &PyFrozenSet_Type ||
           PyType_IsSubtype(type, &RecordBase);
}

/* A value inside another (a map's or record's value, a set's element, a tuple's item): a
 * container below a state's variables (depth 2 and deeper) is cached as they are. */
static int
put_nested(Buffer *b, PyObject *value, int depth)
{
    if (depth >= 2 && FIELDS != NULL && is_container(Py_TYPE(value)))
        return put_cached(b, value, depth);
    return put_value(b, value, depth);
}

static int
put_field(Buffer *b, PyObject *value)
{
    if (!is_container(Py_TYPE(value)))
        return put_value(b, value, 1);
    return put_cached(b, value, 1);
}

static PyObject *
hot_encode_state(PyObject *module, PyObject *state)
{
    read_all(state);
    PyTypeObject *type = Py_TYPE(state);
    PyObject *keys = NULL;
    if (PyType_IsSubtype(type, &RecordBase) && type != MAP)
        keys = _PyType_Lookup(type, STR_KEYS); /* borrowed */
    if (keys == NULL || !PyTuple_CheckExact(keys) ||
        PyTuple_GET_SIZE(keys) + 1 != PyTuple_GET_SIZE(state))
        return hot_encode(module, state);
    if (FIELDS == NULL && (FIELDS = PyMem_Calloc(FIELD_SLOTS, sizeof(FieldSlot))) == NULL)
        return PyErr_NoMemory();
    /* One buffer for every state: grown to a state's size once, not from 256 bytes each time
     * (kip-966's 3 KB states took 2.5 reallocs each). */
    static Buffer scratch = {NULL, 0, 0};
    Buffer b = scratch;
    scratch = (Buffer){NULL, 0, 0}; /* taken: a nested call (none is known) gets its own */
    b.size = 0;
    PyObject *out = NULL;
    Py_ssize_t n = PyTuple_GET_SIZE(keys);
    if (put_header(&b, n, 0x80, 16, 0xde, 0xdf) < 0)
        goto done;
    for (Py_ssize_t i = 0; i < n; i++) {
        if (put_value(&b, PyTuple_GET_ITEM(keys, i), 1) < 0 ||
            put_field(&b, PyTuple_GET_ITEM(state, i + 1)) < 0)
            goto done;
    }
    out = PyBytes_FromStringAndSize(b.data, b.size);
done:
    if (scratch.data == NULL && b.capacity <= (1 << 20))
        scratch = b; /* kept for the next state (a huge one's buffer is not) */
    else
        PyMem_Free(b.data);
    return out;
}

/* encode_state() of each of the `count` states from states[start], appended to the list
 * `encodings`, their fingerprints (of their views' encodings, with `views`, a list aligned
 * with states, else NULL; identify(state, encoding), with `identify`, else NULL) to
 * out[0..count); -1 on an error (the encodings made so far stay appended). */
static int
encode_into(PyObject *module, PyObject *states, Py_ssize_t start, Py_ssize_t count,
            PyObject *fingerprint, PyObject *encodings, PyObject *views, PyObject *identify,
            uint64_t *out)
{
    for (Py_ssize_t k = 0; k < count; k++) {
        PyObject *state = PyList_GET_ITEM(states, start + k);
        PyObject *data = hot_encode_state(module, state);
        if (data == NULL)
            return -1;
        int appended = PyList_Append(encodings, data);
        if (views != NULL) {
            Py_DECREF(data);
            data = appended < 0 ? NULL : hot_encode_state(module, PyList_GET_ITEM(views, start + k));
            if (data == NULL)
                return -1;
        }
        PyObject *fp = NULL;
        if (appended == 0 && identify != NULL) {
            PyObject *argv[2] = {state, data};
            fp = PyObject_Vectorcall(identify, argv, 2, NULL);
        } else if (appended == 0) {
            fp = PyObject_CallOneArg(fingerprint, data);
        }
        Py_DECREF(data);
        if (fp == NULL)
            return -1;
        out[k] = PyLong_AsUnsignedLongLong(fp);
        Py_DECREF(fp);
        if (out[k] == (uint64_t)-1 && PyErr_Occurred())
            return -1;
    }
    return 0;
}

/* encoded(states, start, fingerprint, encodings, views) -> bytes: encode_state() of each of
 * states[start:], appended to the list `encodings`; their fingerprints (fingerprint(data), as
 * uint64s in native order) returned; with `views` (a list aligned with states, or None), the
 * fingerprint of each state's view's encoding instead. On an error the encodings made so far
 * stay appended. */
static PyObject *
hot_encoded(PyObject *module, PyObject *const *args, Py_ssize_t nargs)
{
    if (nargs != 5 || !PyList_Check(args[0]) || !PyList_Check(args[3]) ||
        (args[4] != Py_None &&
         (!PyList_Check(args[4]) || PyList_GET_SIZE(args[4]) != PyList_GET_SIZE(args[0])))) {
        PyErr_SetString(PyExc_TypeError, "encoded(states, start, fingerprint, encodings, views)");
        return NULL;
    }
    PyObject *states = args[0], *fingerprint = args[2], *encodings = args[3];
    PyObject *views = args[4] == Py_None ? NULL : args[4];
    Py_ssize_t start = PyLong_AsSsize_t(args[1]);
    if (start == -1 && PyErr_Occurred())
        return NULL;
    if (start < 0)
        start = 0;
    Py_ssize_t count = PyList_GET_SIZE(states) - start;
    if (count <= 0)
        return PyBytes_FromStringAndSize(NULL, 0);
    PyObject *fps = PyBytes_FromStringAndSize(NULL, 8 * count);
    if (fps == NULL)
        return NULL;
    if (encode_into(module, states, start, count, fingerprint, encodings, views, NULL,
                    (uint64_t *)PyBytes_AS_STRING(fps)) < 0) {
        Py_DECREF(fps);
        return NULL;
    }
    return fps;
}

/* Undo what expand_run did for the state it was expanding: the candidates (or their views)
 * it added to `seen`, to the lists from `cand0` (`made0` memos) on, its actions from `total`
 * on, its successors. An exception being raised stays so. */
static void
undo_state(PyObject *seen, PyObject *candidates, PyObject *views, PyObject *positions,
           PyObject *encodings, PyObject *made, PyObject *actions, PyObject *successors,
           Py_ssize_t cand0, Py_ssize_t made0, Py_ssize_t total)
{
    PyObject *type, *value, *traceback;
    PyErr_Fetch(&type, &value, &traceback);
    PyObject *met = views != Py_None ? views : candidates;
    for (Py_ssize_t k = cand0; k < PyList_GET_SIZE(met); k++)
        if (PySet_Discard(seen, PyList_GET_ITEM(met, k)) < 0)
            PyErr_Clear(); /* (each was added, so it hashes) */
    PyList_SetSlice(candidates, cand0, PY_SSIZE_T_MAX, NULL);
    if (views != Py_None)
        PyList_SetSlice(views, cand0, PY_SSIZE_T_MAX, NULL);
    PyList_SetSlice(positions, cand0, PY_SSIZE_T_MAX, NULL);
    PyList_SetSlice(encodings, cand0, PY_SSIZE_T_MAX, NULL);
    if (made != Py_None)
        PyList_SetSlice(made, made0, PY_SSIZE_T_MAX, NULL);
    PyList_SetSlice(actions, total, PY_SSIZE_T_MAX, NULL);
    PyList_SetSlice(successors, 0, PY_SSIZE_T_MAX, NULL);
    PyErr_Restore(type, value, traceback);
}

/* Cut a bytearray back to `size` bytes (smaller: cannot fail), an exception being raised
 * staying so. */
static void
cut_bytes(PyObject *array, Py_ssize_t size)
{
    PyObject *type, *value, *traceback;
    PyErr_Fetch(&type, &value, &traceback);
    PyByteArray_Resize(array, size);
    PyErr_Restore(type, value, traceback);
}

/* Append n bytes to a bytearray. */
static int
append_bytes(PyObject *array, const void *bytes, Py_ssize_t n)
{
    Py_ssize_t size = PyByteArray_GET_SIZE(array);
    if (PyByteArray_Resize(array, size + n) < 0)
        return -1;
    memcpy(PyByteArray_AS_STRING(array) + size, bytes, n);
    return 0;
}

/* view(state) frozen (a new reference), or NULL with the view's error or freeze()'s. */
static PyObject *
frozen_view(PyObject *view, PyObject *state)
{
    PyObject *raw = PyObject_CallOneArg(view, state);
    if (raw == NULL)
        return NULL;
    PyObject *met = frozen(raw, FROZEN);
    Py_DECREF(raw);
    return met;
}

/* expand_run(call, states, start, stop, memos, seen, Memo, fingerprint, candidates, positions,
 *            encodings, made, counts, stuck, fps, slots, terminals, bail, within, view,
 *            views, redo, identify) -> next
 *
 * Model.expand_batch's common case, one state after another from states[start] to before
 * states[stop]: each state's successors (call: Model.successors's arguments, its state
 * ignored; call[2] the successors list, empty, and call[3] the batch's actions, one per
 * successor so far), those neither the state itself nor in the set `seen` added to it and
 * to `candidates` (their positions to `positions`), each one's Memo to `made` when `memos`
 * (one per state, a Memo or None; `slots` masks) is given, its encoding to `encodings`.
 * Each finished state's number of successors (uint32), whether it is stuck (a byte) and its
 * candidates' fingerprints (uint64) are appended to the bytearrays `counts`, `stuck`, `fps`.
 * Returns the state it stopped before: `stop`, or one that needs the caller's general path
 * (an error of a class in `bail`, a successor that cannot be hashed, a deadlock when
 * `terminals`), undone. Any other error is raised, what was done for that state undone:
 * the caller finds the state in the counts.
 *
 * `within` (or None): whether a state is within the state constraints (if not, it has no
 * successors and is not stuck). `view` (or None): successors are met by their views,
 * view(successor) frozen as freeze() does (appended to `views` with the candidates), and
 * fingerprinted by them; a view that raises (or returns what cannot be frozen) an error of a
 * class in `redo` sends the state to the general path (which says which step built the
 * successor, and how the view failed). `identify` (or None): the candidates' fingerprints are
 * identify(candidate, its encoding) (a symmetry's representative), an error of a class in
 * `redo` sending the state to the general path too. */
static PyObject *
hot_expand_run(PyObject *module, PyObject *const *args, Py_ssize_t nargs)
{
    if (nargs != 23 || !PyTuple_CheckExact(args[0]) || PyTuple_GET_SIZE(args[0]) != 10 ||
        !PyList_Check(args[1]) || !PySet_Check(args[5]) || !PyList_Check(args[8]) ||
        !PyList_Check(args[9]) || !PyList_Check(args[10]) || !PyByteArray_Check(args[12]) ||
        !PyByteArray_Check(args[13]) || !PyByteArray_Check(args[14]) ||
        (args[4] != Py_None && (!PyList_Check(args[4]) || !PyList_Check(args[11]))) ||
        (args[19] != Py_None && !PyList_Check(args[20]))) {
        PyErr_SetString(PyExc_TypeError,
                        "expand_run(call, states, start, stop, memos, seen, Memo, fingerprint,"
                        " candidates, positions, encodings, made, counts, stuck, fps, slots,"
                        " terminals, bail, within, view, views, redo, identify)");
        return NULL;
    }
    PyObject *call = args[0], *states = args[1], *memos = args[4], *seen = args[5];
    PyObject *fingerprint = args[7], *candidates = args[8], *positions = args[9];
    PyObject *encodings = args[10], *made = args[11], *counts = args[12], *stuck = args[13];
    PyObject *fps = args[14], *bail = args[17], *within = args[18], *view = args[19];
    PyObject *views = view != Py_None ? args[20] : Py_None, *redo = args[21];
    PyObject *identify = args[22] != Py_None ? args[22] : NULL;
    PyObject *successors = PyTuple_GET_ITEM(call, 2), *actions = PyTuple_GET_ITEM(call, 3);
    if (!PyList_Check(successors) || !PyList_Check(actions)) {
        PyErr_SetString(PyExc_TypeError, "expand_run(): the successors and actions are lists");
        return NULL;
    }
    if (memos == Py_None)
        made = Py_None;
    else if (!memo_type_ok(args[6]))
        return NULL;
    PyTypeObject *memo_type = (PyTypeObject *)args[6];
    Py_ssize_t start = PyLong_AsSsize_t(args[2]), stop = PyLong_AsSsize_t(args[3]);
    Py_ssize_t slots = PyLong_AsSsize_t(args[15]);
    if ((start == -1 || stop == -1 || slots == -1) && PyErr_Occurred())
        return NULL;
    int terminals = PyObject_IsTrue(args[16]);
    if (terminals < 0)
        return NULL;
    if (start < 0)
        start = 0;
    if (slots < 0)
        slots = 0;
    if (stop > PyList_GET_SIZE(states))
        stop = PyList_GET_SIZE(states);
    if (memos != Py_None && PyList_GET_SIZE(memos) < stop) {
        PyErr_SetString(PyExc_TypeError, "expand_run(): one memo per state");
        return NULL;
    }
    char *masks = PyMem_Calloc(slots ? 8 * slots : 8, 1);
    if (masks == NULL)
        return PyErr_NoMemory();
    PyObject *sargs[10];
    for (int a = 0; a < 10; a++)
        sargs[a] = PyTuple_GET_ITEM(call, a);
    int raised = 0;
    Py_ssize_t i = start;
    for (; i < stop; i++) {
        PyObject *state = PyList_GET_ITEM(states, i);
        Py_ssize_t total = PyList_GET_SIZE(actions);
        Py_ssize_t cand0 = PyList_GET_SIZE(candidates);
        Py_ssize_t made0 = made != Py_None ? PyList_GET_SIZE(made) : 0;
        PyObject *memo = memos != Py_None ? PyList_GET_ITEM(memos, i) : Py_None;
        const char *before = NULL;
        uint64_t changed = 0;
        if (memo != Py_None) {
            PyObject *parent = PyTuple_Check(memo) && PyTuple_GET_SIZE(memo) == 3
                                   ? PyTuple_GET_ITEM(memo, 0) : NULL;
            if (parent == NULL || !PyBytes_Check(parent) || PyBytes_GET_SIZE(parent) < 8 * slots) {
                PyErr_SetString(PyExc_TypeError, "expand_run(): a memo is a Memo, or None");
                raised = 1;
                break;
            }
            before = PyBytes_AS_STRING(parent);
            changed = PyLong_AsUnsignedLongLongMask(PyTuple_GET_ITEM(memo, 1));
            if (changed == (uint64_t)-1 && PyErr_Occurred()) {
                raised = 1;
                break;
            }
        }
        if (within != Py_None) {
            PyObject *inside = PyObject_CallOneArg(within, state);
            int is = inside == NULL ? -1 : PyObject_IsTrue(inside);
            Py_XDECREF(inside);
            if (is < 0) {
                raised = 1; /* (nothing to undo) */
                break;
            }
            if (!is) {
                uint32_t none = 0;
                unsigned char not_stuck = 0;
                if (append_bytes(counts, &none, 4) < 0) {
                    raised = 1;
                    break;
                }
                if (append_bytes(stuck, &not_stuck, 1) < 0) {
                    cut_bytes(counts, PyByteArray_GET_SIZE(counts) - 4);
                    raised = 1;
                    break;
                }
                continue;
            }
        }
        sargs[1] = state;
        PyObject *enabled;
        if (memos != Py_None) {
            memset(masks, 0, 8 * slots);
            PyTypeObject *watched = TRACKED;
            TRACKED = Py_TYPE(state);
            enabled = successors_loop(sargs, before, changed, masks, slots);
            TRACKED = watched;
        } else {
            enabled = successors_loop(sargs, NULL, 0, NULL, 0);
        }
        if (enabled == NULL)
            goto failed;
        int any = enabled == Py_True;
        Py_DECREF(enabled);
        if (!any && terminals) /* an intended final state? Model.final, in the caller */
            goto general;
        Py_ssize_t n = PyList_GET_SIZE(successors);
        for (Py_ssize_t j = 0; j < n; j++) {
            PyObject *succ = PyList_GET_ITEM(successors, j);
            if (succ == state)
                continue;
            PyObject *met = succ; /* (a new reference with a view) */
            if (view != Py_None && (met = frozen_view(view, succ)) == NULL) {
                if (!PyErr_ExceptionMatches(redo))
                    goto failed;
                PyErr_Clear(); /* the caller says which step built the successor */
                goto general;
            }
            Py_ssize_t size = PySet_GET_SIZE(seen);
            int added = PySet_Add(seen, met);
            /* A new one must hash itself too (its view may not show a list inside a tuple). */
            if (added == 0 && PySet_GET_SIZE(seen) != size && met != succ &&
                PyObject_Hash(succ) == -1) {
                PyObject *type, *value, *traceback;
                PyErr_Fetch(&type, &value, &traceback);
                PySet_Discard(seen, met);
                PyErr_Restore(type, value, traceback);
                added = -1;
            }
            if (added < 0) {
                if (met != succ)
                    Py_DECREF(met);
                if (!PyErr_ExceptionMatches(PyExc_TypeError))
                    goto failed;
                PyErr_Clear(); /* a list or set inside a tuple: the caller freezes it */
                goto general;
            }
            if (PySet_GET_SIZE(seen) == size) {
                if (met != succ)
                    Py_DECREF(met);
                continue;
            }
            PyObject *position = PyLong_FromSsize_t(total + j);
            Py_ssize_t count = PyList_GET_SIZE(candidates);
            int appended = position != NULL && PyList_Append(candidates, succ) == 0 &&
                           (views == Py_None || PyList_Append(views, met) == 0) &&
                           PyList_Append(positions, position) == 0;
            Py_XDECREF(position);
            if (!appended) { /* (out of memory) the lists as they were, `met` forgotten */
                PyObject *type, *value, *traceback;
                PyErr_Fetch(&type, &value, &traceback);
                PyList_SetSlice(candidates, count, PY_SSIZE_T_MAX, NULL);
                if (views != Py_None)
                    PyList_SetSlice(views, count, PY_SSIZE_T_MAX, NULL);
                PySet_Discard(seen, met);
                PyErr_Restore(type, value, traceback);
            }
            if (met != succ)
                Py_DECREF(met);
            if (!appended)
                goto failed;
        }
        if (made != Py_None) {
            PyObject *kept = PyBytes_FromStringAndSize(masks, 8 * slots);
            PyObject *held = memo != Py_None ? PyTuple_GET_ITEM(memo, 2) : Py_None;
            int done = kept == NULL ? -1
                                    : append_memos(memo_type, state, candidates, cand0, kept,
                                                   held, made);
            Py_XDECREF(kept);
            if (done < 0)
                goto failed;
        }
        Py_ssize_t fps0 = PyByteArray_GET_SIZE(fps);
        Py_ssize_t found = PyList_GET_SIZE(candidates) - cand0;
        if (PyByteArray_Resize(fps, fps0 + 8 * found) < 0 ||
            encode_into(module, candidates, cand0, found, fingerprint, encodings,
                        views == Py_None ? NULL : views, identify,
                        (uint64_t *)(PyByteArray_AS_STRING(fps) + fps0)) < 0)
            goto unfinished;
        uint32_t count = (uint32_t)n;
        unsigned char flag = !any;
        if (append_bytes(counts, &count, 4) < 0)
            goto unfinished;
        if (append_bytes(stuck, &flag, 1) < 0) {
            cut_bytes(counts, PyByteArray_GET_SIZE(counts) - 4);
            goto unfinished;
        }
        if (PyList_SetSlice(successors, 0, PY_SSIZE_T_MAX, NULL) < 0) {
            raised = 1; /* (the state is counted: what the caller sees is consistent) */
            i++;
            break;
        }
        continue;
    unfinished:
        cut_bytes(fps, fps0);
        if (identify != NULL && PyErr_ExceptionMatches(redo)) {
            PyErr_Clear(); /* the caller says which step built the successor */
            goto general;
        }
        goto failed;
    general:
        undo_state(seen, candidates, views, positions, encodings, made, actions, successors,
                   cand0, made0, total);
        break;
    failed:
        undo_state(seen, candidates, views, positions, encodings, made, actions, successors,
                   cand0, made0, total);
        if (!PyErr_ExceptionMatches(bail)) {
            raised = 1;
            break;
        }
        PyErr_Clear(); /* the caller's general path raises it again, and says where */
        break;
    }
    PyMem_Free(masks);
    return raised ? NULL : PyLong_FromSsize_t(i);
}

static PyObject *
hot_encode(PyObject *module, PyObject *value)
{
    read_all(value);
    Buffer b = {NULL, 0, 0};
    if (put_value(&b, value, 0) < 0) {
        PyMem_Free(b.data);
        return NULL;
    }
    PyObject *out = PyBytes_FromStringAndSize(b.data, b.size);
    PyMem_Free(b.data);
    return out;
}

/* -- decode ----------------------------------------------------------------------------- */

static PyObject *SHAPES;     /* checker.values.record._shapes: field names -> shape */
static PyObject *FROM_PAIRS; /* checker.values.record.from_pairs: any other map */

typedef struct {
    const unsigned char *data;
    Py_ssize_t size, at;
    int memo; /* decode_all: byte-equal values decode to one object (MEMO) */
} Reader;

static int
need(Reader *r, Py_ssize_t n)
{
    if (r->at + n > r->size) {
        PyErr_SetString(PyExc_ValueError, "truncated state encoding");
        return -1;
    }
    return 0;
}

static uint64_t
read_be(Reader *r, int width)
{
    uint64_t v = 0;
    for (int i = 0; i < width; i++)
        v = (v << 8) | r->data[r->at + i];
    r->at += width;
    return v;
}

static PyObject *read_value(Reader *r, int depth);
static PyObject *read_fresh(Reader *r, int depth);

/* Decoding a state made a new str for every field name of every record in it, hashed it to
 * find the record's shape, and compared it with the shape's own names (kip-966's shipped
 * cfg: about 250 names in a 2.8 KB state, 90 us a state). Short strings now come from a
 * direct-mapped cache by their bytes, interned, so that a record's names are the objects its
 * shape was registered with, and the shape is found by their addresses (SHAPE_CACHE). */
#define STR_SLOTS 4096
#define STR_CACHED 64 /* longer strings are decoded afresh */
static PyObject **STR_CACHE;

static PyObject *
read_str(const unsigned char *p, Py_ssize_t n)
{
    if (n > STR_CACHED || (STR_CACHE == NULL &&
                           (STR_CACHE = PyMem_Calloc(STR_SLOTS, sizeof(PyObject *))) == NULL))
        return PyUnicode_DecodeUTF8((const char *)p, n, NULL);
    uint64_t h = 1469598103934665603ULL ^ (uint64_t)n; /* FNV-1a */
    for (Py_ssize_t i = 0; i < n; i++)
        h = (h ^ p[i]) * 1099511628211ULL;
    PyObject **slot = &STR_CACHE[(h ^ (h >> 32)) & (STR_SLOTS - 1)];
    if (*slot != NULL) {
        Py_ssize_t size;
        const char *utf8 = PyUnicode_AsUTF8AndSize(*slot, &size);
        if (utf8 != NULL && size == n && memcmp(utf8, p, n) == 0) {
            Py_INCREF(*slot);
            return *slot;
        }
        PyErr_Clear();
    }
    PyObject *s = PyUnicode_DecodeUTF8((const char *)p, n, NULL);
    if (s == NULL)
        return NULL;
    PyUnicode_InternInPlace(&s);
    Py_INCREF(s);
    Py_XSETREF(*slot, s);
    return s;
}

/* A record's shape by the addresses of its field names (and of int keys, which CPython
 * shares when small): a slot holds the names' tuple, so the addresses stay theirs. */
#define SHAPE_SLOTS 1024
typedef struct {
    PyObject *keys; /* tuple */
    PyObject *shape;
} ShapeSlot;
static ShapeSlot *SHAPE_CACHE;

static ShapeSlot *
shape_slot(PyObject *const *keys, Py_ssize_t n)
{
    if (SHAPE_CACHE == NULL && (SHAPE_CACHE = PyMem_Calloc(SHAPE_SLOTS, sizeof(ShapeSlot))) == NULL)
        return NULL;
    uint64_t h = (uint64_t)n;
    for (Py_ssize_t i = 0; i < n; i++)
        h = (h ^ ((uintptr_t)keys[i] >> 4)) * 1099511628211ULL;
    return &SHAPE_CACHE[(h ^ (h >> 32)) & (SHAPE_SLOTS - 1)];
}

static void
forget_shapes(void)
{
    if (SHAPE_CACHE == NULL)
        return;
    for (Py_ssize_t i = 0; i < SHAPE_SLOTS; i++) {
        Py_CLEAR(SHAPE_CACHE[i].keys);
        Py_CLEAR(SHAPE_CACHE[i].shape);
    }
}

static PyObject *
read_tuple(Reader *r, Py_ssize_t n, int depth)
{
    if (n > r->size - r->at) { /* every item takes at least a byte */
        PyErr_SetString(PyExc_ValueError, "truncated state encoding");
        return NULL;
    }
    PyObject *t = PyTuple_New(n);
    if (t == NULL)
        return NULL;
    for (Py_ssize_t i = 0; i < n; i++) {
        PyObject *item = read_value(r, depth + 1);
        if (item == NULL) {
            Py_DECREF(t);
            return NULL;
        }
        PyTuple_SET_ITEM(t, i, item);
    }
    return t;
}

#define MAP_ON_STACK 32

static PyObject *
read_map(Reader *r, Py_ssize_t n, int depth)
{
    if (2 * n > r->size - r->at) {
        PyErr_SetString(PyExc_ValueError, "truncated state encoding");
        return NULL;
    }
    PyObject *stack[2 * MAP_ON_STACK], **items = stack, *keys = NULL, *out = NULL;
    if (n > MAP_ON_STACK && (items = PyMem_Malloc(2 * n * sizeof(PyObject *))) == NULL)
        return PyErr_NoMemory();
    PyObject **ks = items, **vs = items + n;
    Py_ssize_t got = 0, moved = 0; /* pairs read; values given to `out` */
    for (; got < n; got++) {
        if ((ks[got] = read_value(r, depth + 1)) == NULL)
            goto done;
        if ((vs[got] = read_value(r, depth + 1)) == NULL) {
            Py_DECREF(ks[got]);
            goto done;
        }
    }
    ShapeSlot *slot = shape_slot(ks, n);
    PyObject *shape = NULL, *found = NULL; /* borrowed: the shape (or MAP) and its keys */
    if (slot != NULL && slot->keys != NULL && PyTuple_GET_SIZE(slot->keys) == n) {
        shape = slot->shape;
        found = slot->keys;
        for (Py_ssize_t i = 0; i < n && shape != NULL; i++)
            if (PyTuple_GET_ITEM(found, i) != ks[i])
                shape = NULL;
    }
    if (shape == NULL) {
        if ((keys = PyTuple_New(n)) == NULL)
            goto done;
        int ints = n > 0 && MAP != NULL;
        for (Py_ssize_t i = 0; i < n; i++) {
            Py_INCREF(ks[i]);
            PyTuple_SET_ITEM(keys, i, ks[i]);
            ints = ints && PyLong_CheckExact(ks[i]);
        }
        shape = PyDict_GetItemWithError(SHAPES, keys);
        if (shape == NULL && PyErr_Occurred())
            goto done;
        if (shape == NULL && ints) { /* a Map, as from_pairs makes it, its keys shared */
            if ((keys = shared_keys(keys)) == NULL)
                goto done;
            shape = (PyObject *)MAP;
        }
        if (shape != NULL && slot != NULL) {
            Py_INCREF(keys);
            Py_XSETREF(slot->keys, keys);
            Py_INCREF(shape);
            Py_XSETREF(slot->shape, shape);
        }
        found = keys;
    }
    if (shape == (PyObject *)MAP) {
        PyObject *values = PyTuple_New(n);
        if (values == NULL || (out = shaped(MAP, 2)) == NULL) {
            Py_XDECREF(values);
            goto done;
        }
        for (; moved < n; moved++)
            PyTuple_SET_ITEM(values, moved, vs[moved]);
        Py_INCREF(found);
        PyTuple_SET_ITEM(out, 1, found);
        PyTuple_SET_ITEM(out, 2, values);
    } else if (shape != NULL) {
        if ((out = shaped((PyTypeObject *)shape, n)) == NULL)
            goto done;
        for (; moved < n; moved++)
            PyTuple_SET_ITEM(out, moved + 1, vs[moved]);
    } else {
        PyObject *pairs = PyList_New(n);
        if (pairs == NULL)
            goto done;
        for (Py_ssize_t i = 0; i < n; i++) {
            PyObject *pair = PyTuple_Pack(2, ks[i], vs[i]);
            if (pair == NULL) {
                Py_DECREF(pairs);
                goto done;
            }
            PyList_SET_ITEM(pairs, i, pair);
        }
        out = PyObject_CallOneArg(FROM_PAIRS, pairs);
        Py_DECREF(pairs);
    }
done:
    for (Py_ssize_t i = 0; i < got; i++) {
        Py_DECREF(ks[i]);
        if (i >= moved)
            Py_DECREF(vs[i]);
    }
    Py_XDECREF(keys);
    if (items != stack)
        PyMem_Free(items);
    return out;
}

static PyObject *
read_ext(Reader *r, Py_ssize_t n, int depth)
{
    if (need(r, 1 + n) < 0)
        return NULL;
    int code = (signed char)r->data[r->at++];
    if (code != 1) {
        PyErr_Format(STATE_ERROR, "unknown msgpack extension type %d", code);
        return NULL;
    }
    Reader inner = {r->data + r->at, n, 0, r->memo};
    r->at += n;
    PyObject *items = read_fresh(&inner, depth); /* its elements one level below it */
    if (items == NULL)
        return NULL;
    if (!PyTuple_CheckExact(items) || inner.at != inner.size) {
        Py_DECREF(items);
        PyErr_SetString(PyExc_ValueError, "a set's encoding is not one array");
        return NULL;
    }
    PyObject *set = PyFrozenSet_New(items);
    Py_DECREF(items);
    return set;
}

static PyObject *
read_fresh(Reader *r, int depth)
{
    if (depth > 500) {
        PyErr_SetString(PyExc_ValueError, "a state encoding nested deeper than 500 levels");
        return NULL;
    }
    if (need(r, 1) < 0)
        return NULL;
    unsigned char c = r->data[r->at++];
    if (c <= 0x7f)
        return PyLong_FromLong(c);
    if (c >= 0xe0)
        return PyLong_FromLong((signed char)c);
    if ((c & 0xe0) == 0xa0 || c == 0xd9 || c == 0xda || c == 0xdb) {
        Py_ssize_t n;
        if ((c & 0xe0) == 0xa0)
            n = c & 0x1f;
        else {
            int width = c == 0xd9 ? 1 : c == 0xda ? 2 : 4;
            if (need(r, width) < 0)
                return NULL;
            n = (Py_ssize_t)read_be(r, width);
        }
        if (need(r, n) < 0)
            return NULL;
        PyObject *s = read_str(r->data + r->at, n);
        r->at += n;
        return s;
    }
    if ((c & 0xf0) == 0x90)
        return read_tuple(r, c & 0x0f, depth);
    if ((c & 0xf0) == 0x80)
        return read_map(r, c & 0x0f, depth);
    switch (c) {
    case 0xc0:
        Py_RETURN_NONE;
    case 0xc2:
        Py_RETURN_FALSE;
    case 0xc3:
        Py_RETURN_TRUE;
    case 0xc4: case 0xc5: case 0xc6: {
        int width = c == 0xc4 ? 1 : c == 0xc5 ? 2 : 4;
        if (need(r, width) < 0)
            return NULL;
        Py_ssize_t n = (Py_ssize_t)read_be(r, width);
        if (need(r, n) < 0)
            return NULL;
        PyObject *b = PyBytes_FromStringAndSize((const char *)r->data + r->at, n);
        r->at += n;
        return b;
    }
    case 0xcc: case 0xcd: case 0xce: case 0xcf: {
        int width = c == 0xcc ? 1 : c == 0xcd ? 2 : c == 0xce ? 4 : 8;
        if (need(r, width) < 0)
            return NULL;
        return PyLong_FromUnsignedLongLong(read_be(r, width));
    }
    case 0xd0: case 0xd1: case 0xd2: case 0xd3: {
        int width = c == 0xd0 ? 1 : c == 0xd1 ? 2 : c == 0xd2 ? 4 : 8;
        if (need(r, width) < 0)
            return NULL;
        uint64_t u = read_be(r, width);
        int64_t v = width == 1 ? (int8_t)u : width == 2 ? (int16_t)u : width == 4 ? (int32_t)u
                                                                            : (int64_t)u;
        return PyLong_FromLongLong(v);
    }
    case 0xdc: case 0xdd: case 0xde: case 0xdf: {
        int width = (c == 0xdc || c == 0xde) ? 2 : 4;
        if (need(r, width) < 0)
            return NULL;
        Py_ssize_t n = (Py_ssize_t)read_be(r, width);
        return c <= 0xdd ? read_tuple(r, n, depth) : read_map(r, n, depth);
    }
    case 0xd4: case 0xd5: case 0xd6: case 0xd7: case 0xd8:
        return read_ext(r, (Py_ssize_t)1 << (c - 0xd4), depth);
    case 0xc7: case 0xc8: case 0xc9: {
        int width = c == 0xc7 ? 1 : c == 0xc8 ? 2 : 4;
        if (need(r, width) < 0)
            return NULL;
        return read_ext(r, (Py_ssize_t)read_be(r, width), depth);
    }
    }
    PyErr_Format(PyExc_ValueError, "not a state encoding (byte 0x%02x)", c);
    return NULL;
}

/* decode_all(blob, offsets): the states of a part sent encoded (a part another expander took
 * over, a Spark partition). States of one part are mostly siblings and cousins, alike but for
 * a few variables; decoded one by one they shared no object, so their successors' encodings
 * missed the encoding cache (keyed by identity) and the dedupe compared equal values deeply.
 * Within one call, a container down to MEMO_DEPTH whose bytes were decoded before, down to
 * that depth too, is that same object (values are immutable): found by a hash of its bytes,
 * skipped over without building it. */
#define MEMO_DEPTH 4 /* the variables and three levels below them */
typedef struct {
    const unsigned char *at; /* its bytes, in the blob being decoded */
    Py_ssize_t size;
    uint64_t hash;
    PyObject *value; /* NULL: a free slot */
} MemoSlot;
static MemoSlot *MEMO; /* open addressing, at most half full: nothing is evicted in a call */
static Py_ssize_t MEMO_CAPACITY, MEMO_USED;

/* The slot of the bytes [p, p + n) with hash h: theirs, or the free one to put them in. */
static MemoSlot *
memo_slot(const unsigned char *p, Py_ssize_t n, uint64_t h)
{
    for (Py_ssize_t i = (Py_ssize_t)(h & (MEMO_CAPACITY - 1));; i = (i + 1) & (MEMO_CAPACITY - 1)) {
        MemoSlot *slot = &MEMO[i];
        if (slot->value == NULL ||
            (slot->hash == h && slot->size == n && memcmp(slot->at, p, n) == 0))
            return slot;
    }
}

static int
memo_grow(void)
{
    MemoSlot *old = MEMO;
    Py_ssize_t capacity = MEMO_CAPACITY;
    MemoSlot *slots = PyMem_Calloc(capacity ? 2 * capacity : 4096, sizeof(MemoSlot));
    if (slots == NULL) {
        PyErr_NoMemory();
        return -1;
    }
    MEMO = slots;
    MEMO_CAPACITY = capacity ? 2 * capacity : 4096;
    for (Py_ssize_t i = 0; i < capacity; i++)
        if (old[i].value != NULL)
            *memo_slot(old[i].at, old[i].size, old[i].hash) = old[i];
    PyMem_Free(old);
    return 0;
}

/* Empty the memo after a call; free a table a big part grew, now much too big. */
static void
memo_clear(void)
{
    Py_ssize_t used = MEMO_USED;
    for (Py_ssize_t i = 0; MEMO_USED > 0 && i < MEMO_CAPACITY; i++)
        if (MEMO[i].value != NULL) {
            Py_CLEAR(MEMO[i].value);
            MEMO_USED--;
        }
    if (MEMO_CAPACITY > 4096 && 16 * used < MEMO_CAPACITY) {
        PyMem_Free(MEMO);
        MEMO = NULL;
        MEMO_CAPACITY = 0;
    }
}

/* skip(r): past one value without building it; -1 when it is not well formed (nothing is
 * raised: the caller decodes it, which says what is wrong). */
static int
skip(Reader *r, int depth)
{
    if (depth > 500 || r->at >= r->size)
        return -1;
    unsigned char c = r->data[r->at++];
    Py_ssize_t n = 0, items = 0;
    int width = 0;
    if (c <= 0x7f || c >= 0xe0 || c == 0xc0 || c == 0xc2 || c == 0xc3)
        return 0;
    if ((c & 0xe0) == 0xa0) {
        n = c & 0x1f;
        goto bytes;
    }
    if ((c & 0xf0) == 0x90 || (c & 0xf0) == 0x80) {
        items = (c & 0x0f) * ((c & 0xf0) == 0x80 ? 2 : 1);
        goto items;
    }
    switch (c) {
    case 0xcc: case 0xd0: n = 1; goto bytes;
    case 0xcd: case 0xd1: n = 2; goto bytes;
    case 0xce: case 0xd2: n = 4; goto bytes;
    case 0xcf: case 0xd3: n = 8; goto bytes;
    case 0xd4: case 0xd5: case 0xd6: case 0xd7: case 0xd8:
        n = 1 + ((Py_ssize_t)1 << (c - 0xd4)); /* the type byte, then the data */
        goto bytes;
    case 0xd9: case 0xc4: case 0xc7: width = 1; break;
    case 0xda: case 0xc5: case 0xc8: case 0xdc: case 0xde: width = 2; break;
    case 0xdb: case 0xc6: case 0xc9: case 0xdd: case 0xdf: width = 4; break;
    default:
        return -1;
    }
    if (width > r->size - r->at)
        return -1;
    n = (Py_ssize_t)read_be(r, width);
    if (c >= 0xdc) { /* an array or a map of n items or pairs */
        items = c >= 0xde ? 2 * n : n;
        goto items;
    }
    if (c >= 0xc7 && c <= 0xc9)
        n += 1; /* an ext's type byte */
bytes:
    if (n > r->size - r->at)
        return -1;
    r->at += n;
    return 0;
items:
    for (Py_ssize_t i = 0; i < items; i++)
        if (skip(r, depth + 1) < 0)
            return -1;
    return 0;
}

static uint64_t
span_hash(const unsigned char *p, Py_ssize_t n)
{
    uint64_t h = 0x9E3779B97F4A7C15ULL ^ (uint64_t)n, w;
    Py_ssize_t i = 0;
    for (; i + 8 <= n; i += 8) {
        memcpy(&w, p + i, 8);
        h = (h ^ w) * 0xbf58476d1ce4e5b9ULL;
        h ^= h >> 29;
    }
    w = 0;
    memcpy(&w, p + i, n - i);
    h = (h ^ w) * 0x94d049bb133111ebULL;
    return h ^ (h >> 32);
}

static int
is_container_byte(unsigned char c)
{
    return (c & 0xe0) == 0x80 || (c >= 0xdc && c <= 0xdf) || (c >= 0xd4 && c <= 0xd8) ||
           (c >= 0xc7 && c <= 0xc9);
}

static PyObject *
read_value(Reader *r, int depth)
{
    if (!r->memo || depth < 1 || depth > MEMO_DEPTH || r->at >= r->size ||
        !is_container_byte(r->data[r->at]))
        return read_fresh(r, depth);
    Py_ssize_t start = r->at;
    if (skip(r, depth) < 0) {
        r->at = start;
        return read_fresh(r, depth); /* and its error */
    }
    const unsigned char *p = r->data + start;
    Py_ssize_t n = r->at - start;
    uint64_t h = span_hash(p, n);
    MemoSlot *slot = memo_slot(p, n, h);
    if (slot->value != NULL) {
        Py_INCREF(slot->value);
        return slot->value;
    }
    r->at = start;
    PyObject *value = read_fresh(r, depth);
    if (value == NULL)
        return NULL;
    if (2 * (MEMO_USED + 1) > MEMO_CAPACITY) {
        if (memo_grow() < 0) {
            Py_DECREF(value);
            return NULL;
        }
    }
    slot = memo_slot(p, n, h); /* again: decoding the value's items moved the slots */
    if (slot->value == NULL) {
        Py_INCREF(value);
        *slot = (MemoSlot){p, n, h, value};
        MEMO_USED++;
    }
    return value;
}

static PyObject *
hot_decode(PyObject *module, PyObject *data)
{
    Py_buffer view;
    if (PyObject_GetBuffer(data, &view, PyBUF_SIMPLE) < 0)
        return NULL;
    Reader r = {view.buf, view.len, 0, 0};
    PyObject *value = read_value(&r, 0);
    if (value != NULL && r.at != r.size) {
        Py_DECREF(value);
        value = NULL;
        PyErr_SetString(PyExc_ValueError, "extra bytes after a state encoding");
    }
    PyBuffer_Release(&view);
    return value;
}

static PyObject *
hot_decode_all(PyObject *module, PyObject *const *args, Py_ssize_t nargs)
{
    if (nargs != 2) {
        PyErr_SetString(PyExc_TypeError, "decode_all() takes 2 arguments");
        return NULL;
    }
    if (MEMO == NULL && memo_grow() < 0)
        return NULL;
    Py_buffer blob, offsets;
    if (PyObject_GetBuffer(args[0], &blob, PyBUF_SIMPLE) < 0)
        return NULL;
    if (PyObject_GetBuffer(args[1], &offsets, PyBUF_SIMPLE) < 0) {
        PyBuffer_Release(&blob);
        return NULL;
    }
    PyObject *out = NULL;
    Py_ssize_t count = offsets.len / 8 - 1;
    if (offsets.len % 8 != 0 || count < 0) {
        PyErr_SetString(PyExc_ValueError, "offsets must be uint64s, one more than the states");
        goto done;
    }
    const uint64_t *at = offsets.buf;
    for (Py_ssize_t i = 0; i < count; i++)
        if (at[i] > at[i + 1] || at[i + 1] > (uint64_t)blob.len) {
            PyErr_SetString(PyExc_ValueError, "offsets out of order or past the blob's end");
            goto done;
        }
    if ((out = PyList_New(count)) == NULL)
        goto done;
    for (Py_ssize_t i = 0; i < count; i++) {
        Reader r = {(const unsigned char *)blob.buf + at[i], (Py_ssize_t)(at[i + 1] - at[i]), 0,
                    1};
        PyObject *value = read_value(&r, 0);
        if (value != NULL && r.at != r.size) {
            Py_DECREF(value);
            value = NULL;
            PyErr_SetString(PyExc_ValueError, "extra bytes after a state encoding");
        }
        if (value == NULL) {
            Py_CLEAR(out);
            goto done;
        }
        PyList_SET_ITEM(out, i, value);
    }
done:
    memo_clear(); /* its spans are in this blob */
    PyBuffer_Release(&offsets);
    PyBuffer_Release(&blob);
    return out;
}

/* rename(image, values) -> list: each of `values` renamed by the dict `image` (a value not in
 * it is itself; True and False are never renamed, though Python finds True == 1): what
 * checker.symmetry's Permutation maps over a tuple or a set, without a Python frame. */
static PyObject *
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

/* decoding(shapes, from_pairs): what decode() needs of checker.values.record. */
static PyObject *
hot_decoding(PyObject *module, PyObject *args)
{
    PyObject *shapes, *from_pairs;
    if (!PyArg_ParseTuple(args, "O!O", &PyDict_Type, &shapes, &from_pairs))
        return NULL;
    Py_INCREF(shapes);
    Py_XSETREF(SHAPES, shapes);
    Py_INCREF(from_pairs);
    Py_XSETREF(FROM_PAIRS, from_pairs);
    forget_shapes(); /* found in the former table */
    Py_RETURN_NONE;
}

/* -- configure ---------------------------------------------------------------------------- */

static PyObject *
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
    {"factory", hot_factory, METH_VARARGS, "factory(Record, factory)"},
    {"maker", hot_maker, METH_VARARGS, "maker(order, shape, where)"},
    {"take", (PyCFunction)(void (*)(void))hot_take, METH_FASTCALL,
     "take(shape, indices, record): the record of shape with record's fields at indices."},
    {"without", (PyCFunction)(void (*)(void))hot_without, METH_FASTCALL,
     "without(record, *keys): record without the given keys (missing keys are ignored)."},
    {"put", (PyCFunction)(void (*)(void))hot_put, METH_FASTCALL,
     "`container` with `key` set to `value`: a tuple by index or a Record by key."},
    {"successors", (PyCFunction)(void (*)(void))hot_successors, METH_FASTCALL,
     "successors(plan, state, states, actions, bindings, general, reraise, constrained, kinds,"
     " kind_error[, memo, changed, out]) -> enabled"},
    {"holds", (PyCFunction)(void (*)(void))hot_holds, METH_FASTCALL,
     "holds(predicates, state, memo, changed, out) -> -1 or the first that does not hold"},
    {"verdicts", (PyCFunction)(void (*)(void))hot_verdicts, METH_FASTCALL,
     "verdicts(predicates, states, memos, Memo) -> ([[index, predicate], ...], new memos)"},
    {"memos_of", (PyCFunction)(void (*)(void))hot_memos_of, METH_FASTCALL,
     "memos_of(Memo, parent, states, start, masks, held, out): each state's Memo, appended"},
    {"changed", (PyCFunction)(void (*)(void))hot_changed, METH_FASTCALL,
     "changed(parent, state) -> the variables that are not the same objects, as bits"},
    {"conforms", (PyCFunction)(void (*)(void))hot_conforms, METH_FASTCALL,
     "conforms(value, old, kind) -> whether value is of kind (kinds.conforms_python)"},
    {"field", hot_field, METH_VARARGS, "field(index, doc): a record shape's field"},
    {"candidates", (PyCFunction)(void (*)(void))hot_candidates, METH_FASTCALL,
     "candidates(successors, start, seen, found, positions, offset, parent) -> None or an index"},
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
     "expand_run(call, states, start, stop, memos, seen, Memo, fingerprint, candidates,"
     " positions, encodings, made, counts, stuck, fps, slots, terminals, bail, within,"
     " view, views, redo, identify) -> next"},
    {"rename", (PyCFunction)(void (*)(void))hot_rename, METH_FASTCALL,
     "rename(image, values) -> list: each value renamed by the dict image (bools never)"},
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
    return module;
}
