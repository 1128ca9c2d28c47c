#include "hot.h"

/* -- encode ---------------------------------------------------------------------------- */

/* A Buffer's room for `more` bytes: doubled from 256 (or its stack array's size), moved to the
 * heap when it outgrows its stack array. */
int
buffer_grow(Buffer *b, Py_ssize_t more)
{
    if (b->size + more <= b->capacity)
        return 0;
    Py_ssize_t capacity = b->capacity ? b->capacity : 256;
    while (capacity < b->size + more)
        capacity *= 2;
    char *data;
    if (b->data != NULL && b->data == b->stack) {
        data = PyMem_Malloc(capacity);
        if (data != NULL)
            memcpy(data, b->data, b->size);
    } else {
        data = PyMem_Realloc(b->data, capacity);
    }
    if (data == NULL) {
        PyErr_NoMemory();
        return -1;
    }
    b->data = data;
    b->capacity = capacity;
    return 0;
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

/* A str's, bytes' or extension's header: `fix | n` under `fixlimit`, else the first of h8,
 * h16, h32 whose size field holds n, and n. */
static inline int
put_size(Buffer *b, Py_ssize_t n, unsigned char fix, int fixlimit, unsigned char h8,
         unsigned char h16, unsigned char h32)
{
    if (n < fixlimit)
        return put_byte(b, (unsigned char)(fix | n));
    if (n < 256)
        return put_be(b, h8, (uint64_t)n, 1);
    if (n < 65536)
        return put_be(b, h16, (uint64_t)n, 2);
    return put_be(b, h32, (uint64_t)n, 4);
}

int
compare_spans(const void *x, const void *y)
{
    const Span *a = x, *b = y;
    return compare_bytes(a->base + a->start, a->size, b->base + b->start, b->size);
}

int
put_elements(Buffer *scratch, Span *spans, PyObject *set, Py_ssize_t n, ElementWriter write,
             void *with, int depth)
{
    PyObject *iterator = PyObject_GetIter(set), *item;
    if (iterator == NULL)
        return -1;
    Py_ssize_t i = 0;
    while (i < n && (item = PyIter_Next(iterator)) != NULL) {
        spans[i].start = scratch->size;
        int failed = write(scratch, item, with, depth) < 0;
        Py_DECREF(item);
        if (failed) {
            Py_DECREF(iterator);
            return -1;
        }
        spans[i].size = scratch->size - spans[i].start;
        i++;
    }
    Py_DECREF(iterator);
    return PyErr_Occurred() ? -1 : 0;
}

/* The set whose n elements' encodings are `spans` of `scratch`: extension 1 holding an array
 * of them, sorted. */
static int
put_sorted_set(Buffer *b, const Buffer *scratch, Span *spans, Py_ssize_t n)
{
    Py_ssize_t size = n < 16 ? 1 : n < 65536 ? 3 : 5; /* the extension's: the array's header */
    for (Py_ssize_t k = 0; k < n; k++) {
        spans[k].base = scratch->data;
        size += spans[k].size;
    }
    qsort(spans, (size_t)n, sizeof(Span), compare_spans);
    int fixed = size == 1 ? 0xd4 : size == 2 ? 0xd5 : size == 4 ? 0xd6 : size == 8 ? 0xd7
                : size == 16 ? 0xd8 : 0;
    int status = fixed ? put_byte(b, (unsigned char)fixed)
                       : put_size(b, size, 0, 0, 0xc7, 0xc8, 0xc9);
    if (status < 0 || put_byte(b, 1) < 0 || put_header(b, n, 0x90, 16, 0xdc, 0xdd) < 0)
        return -1;
    for (Py_ssize_t k = 0; k < n; k++)
        if (put_bytes(b, scratch->data + spans[k].start, spans[k].size) < 0)
            return -1;
    return 0;
}

int
put_set_with(Buffer *b, PyObject *set, ElementWriter write, void *with, int depth)
{
    Py_ssize_t n = PySet_GET_SIZE(set);
    char stack[512];
    Buffer elements;
    BUFFER_ON(elements, stack);
    Span few[SPANS], *spans = spans_for(n, few);
    if (spans == NULL)
        return -1;
    int status = put_elements(&elements, spans, set, n, write, with, depth + 1);
    if (status == 0)
        status = put_sorted_set(b, &elements, spans, n);
    buffer_free(&elements);
    spans_free(spans, few);
    return status;
}

static int
nested(Buffer *b, PyObject *element, void *with, int depth)
{
    (void)with;
    return put_nested(b, element, depth);
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
    if (too_deep(depth))
        return -1;
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
        if (put_size(b, n, 0xa0, 32, 0xd9, 0xda, 0xdb) < 0)
            return -1;
        return put_bytes(b, text, n);
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
        return put_set_with(b, value, nested, NULL, depth);
    if (type == &PyBytes_Type) {
        Py_ssize_t n = PyBytes_GET_SIZE(value);
        if (put_size(b, n, 0, 0, 0xc4, 0xc5, 0xc6) < 0)
            return -1;
        return put_bytes(b, PyBytes_AS_STRING(value), n);
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
PyObject *
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
    forget_hashes();
    forget_orders();
    Py_RETURN_NONE;
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

PyObject *
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
    static Buffer scratch = {NULL, 0, 0, NULL};
    Buffer b = scratch;
    scratch = (Buffer){NULL, 0, 0, NULL}; /* taken: a nested call (none is known) gets its own */
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
int
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
PyObject *
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


PyObject *
hot_encode(PyObject *module, PyObject *value)
{
    read_all(value);
    Buffer b = {NULL, 0, 0, NULL};
    if (put_value(&b, value, 0) < 0) {
        PyMem_Free(b.data);
        return NULL;
    }
    PyObject *out = PyBytes_FromStringAndSize(b.data, b.size);
    PyMem_Free(b.data);
    return out;
}

int
put_atom(Buffer *b, PyObject *value)
{
    return put_value(b, value, 0);
}
