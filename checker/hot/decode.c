#include "hot.h"

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

PyObject *
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

PyObject *
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

/* decoding(shapes, from_pairs): what decode() needs of checker.values.record. */
PyObject *
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

