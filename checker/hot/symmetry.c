#include "hot.h"

/* -- renamed_encodings: symmetry over model values (checker.symmetry) ----------------------
 *
 * renamed_encodings(state, images) -> list of bytes: for each dict `image` (str -> str, a
 * renaming of the symmetric model values), the canonical encoding (encode.c's bytes) of
 * `state` with every str found in `image` renamed wherever it is: a set element, a tuple
 * item, a record's or map's key or value. Sets are re-sorted and keys re-ordered canonically
 * after renaming, so the bytes are encode(renamed_python(state, image)), without building
 * the renamed state and with no Python call per image. */

/* A buffer that starts in `inline` (on the stack, with the Out: no allocation for the sets
 * and maps of a state's usual size) and moves to the heap when it outgrows it. */
#define INLINE 512
typedef struct {
    char *data;
    Py_ssize_t size, capacity;
    char inline_[INLINE];
} Out;

#define OUT_INIT(b) ((b).data = (b).inline_, (b).size = 0, (b).capacity = INLINE)
#define OUT_FREE(b) ((b).data != (b).inline_ ? PyMem_Free((b).data) : (void)0)

static int
out_grow(Out *b, Py_ssize_t more)
{
    if (b->size + more <= b->capacity)
        return 0;
    Py_ssize_t capacity = b->capacity;
    while (capacity < b->size + more)
        capacity *= 2;
    char *data;
    if (b->data == b->inline_) {
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

static inline int
out_bytes(Out *b, const void *bytes, Py_ssize_t n)
{
    if (b->size + n > b->capacity && out_grow(b, n) < 0)
        return -1;
    memcpy(b->data + b->size, bytes, n);
    b->size += n;
    return 0;
}

static inline int
out_byte(Out *b, unsigned char c)
{
    if (b->size + 1 > b->capacity && out_grow(b, 1) < 0)
        return -1;
    b->data[b->size++] = (char)c;
    return 0;
}

static int
out_be(Out *b, unsigned char head, uint64_t value, int width)
{
    unsigned char out[9];
    out[0] = head;
    for (int i = 0; i < width; i++)
        out[1 + i] = (unsigned char)(value >> (8 * (width - 1 - i)));
    return out_bytes(b, out, 1 + width);
}

static int
out_header(Out *b, Py_ssize_t n, unsigned char fix, int fixlimit, unsigned char h16,
           unsigned char h32)
{
    if (n < fixlimit)
        return out_byte(b, (unsigned char)(fix | n));
    if (n < 65536)
        return out_be(b, h16, (uint64_t)n, 2);
    return out_be(b, h32, (uint64_t)n, 4);
}

/* The encoding of a value that is no container (an atom), as encode.c writes it: taken from
 * encode() itself, so that the two cannot differ (ints, bytes, None, bools). */
static int
out_atom(Out *b, PyObject *value)
{
    PyObject *data = hot_encode(NULL, value);
    if (data == NULL)
        return -1;
    int status = out_bytes(b, PyBytes_AS_STRING(data), PyBytes_GET_SIZE(data));
    Py_DECREF(data);
    return status;
}

/* An atom: the common ones inline (None, bools, small ints), the rest as encode() writes. */
static int
out_plain(Out *b, PyObject *value)
{
    if (value == Py_None)
        return out_byte(b, 0xc0);
    if (value == Py_True)
        return out_byte(b, 0xc3);
    if (value == Py_False)
        return out_byte(b, 0xc2);
    if (Py_TYPE(value) == &PyLong_Type) {
        int overflow = 0;
        long long v = PyLong_AsLongLongAndOverflow(value, &overflow);
        if (!overflow && !(v == -1 && PyErr_Occurred()) && v >= -32 && v < 128)
            return out_byte(b, (unsigned char)(signed char)v);
        PyErr_Clear();
    }
    return out_atom(b, value);
}

static int
out_text(Out *b, PyObject *value)
{
    Py_ssize_t n;
    const char *text = PyUnicode_AsUTF8AndSize(value, &n);
    if (text == NULL)
        return out_atom(b, value); /* encode()'s error */
    int status;
    if (n < 32)
        status = out_byte(b, (unsigned char)(0xa0 | n));
    else if (n < 256)
        status = out_be(b, 0xd9, (uint64_t)n, 1);
    else if (n < 65536)
        status = out_be(b, 0xda, (uint64_t)n, 2);
    else
        status = out_be(b, 0xdb, (uint64_t)n, 4);
    return status < 0 ? -1 : out_bytes(b, text, n);
}

/* A bit per hash of the strs any image of the call moves (NAMED): a str whose bit is not set
 * is renamed by none, and not looked up. */
static uint64_t NAMED;

static inline uint64_t
hash_bit(Py_hash_t hash)
{
    return (uint64_t)1 << ((uint64_t)hash & 63);
}

/* `value` renamed by `image` (a borrowed reference): a str in it is its image. */
static PyObject *
renamed_atom(PyObject *value, PyObject *image)
{
    if (!PyUnicode_CheckExact(value))
        return value;
    Py_hash_t hash = ((PyASCIIObject *)value)->hash;
    if (hash != -1 && !(NAMED & hash_bit(hash)))
        return value;
    PyObject *to = PyDict_GetItemWithError(image, value); /* borrowed */
    return to == NULL ? value : to;
}

static int put_renamed(Out *b, PyObject *value, PyObject *image, int depth);

typedef struct {
    Py_ssize_t start, size; /* in the scratch buffer: what is sorted by */
    Py_ssize_t whole;       /* the bytes written (from start): a key's are followed by its value's */
    const char *text;       /* a str key's UTF-8 text (sorted by when every key is a str) */
    Py_ssize_t text_size;
    const char *base;
} Piece;
#define PIECES 32 /* a set's or map's elements sorted without an allocation */

static int
compare_bytes(const char *x, Py_ssize_t nx, const char *y, Py_ssize_t ny)
{
    Py_ssize_t n = nx < ny ? nx : ny;
    int c = memcmp(x, y, (size_t)n);
    if (c != 0)
        return c;
    return (nx > ny) - (nx < ny);
}

static int
compare_encodings(const void *x, const void *y)
{
    const Piece *a = x, *b = y;
    return compare_bytes(a->base + a->start, a->size, b->base + b->start, b->size);
}

static int
compare_texts(const void *x, const void *y)
{
    const Piece *a = x, *b = y;
    return compare_bytes(a->text, a->text_size, b->text, b->text_size);
}

/* A frozenset: extension 1 holding an array of its renamed elements' encodings, sorted. */
static int
put_renamed_set(Out *b, PyObject *set, PyObject *image, int depth)
{
    Py_ssize_t n = PySet_GET_SIZE(set);
    Out elements, payload;
    OUT_INIT(elements);
    OUT_INIT(payload);
    Piece few[PIECES];
    Piece *pieces = n <= PIECES ? few : PyMem_Malloc(sizeof(Piece) * n);
    if (pieces == NULL) {
        PyErr_NoMemory();
        return -1;
    }
    int status = -1;
    Py_ssize_t i = 0;
    PyObject *item;
    PyObject *iterator = PyObject_GetIter(set);
    if (iterator == NULL)
        goto done;
    while (i < n && (item = PyIter_Next(iterator)) != NULL) {
        pieces[i].start = elements.size;
        int failed = put_renamed(&elements, item, image, depth + 1) < 0;
        Py_DECREF(item);
        if (failed) {
            Py_DECREF(iterator);
            goto done;
        }
        pieces[i].size = elements.size - pieces[i].start;
        i++;
    }
    Py_DECREF(iterator);
    if (PyErr_Occurred())
        goto done;
    for (Py_ssize_t k = 0; k < n; k++)
        pieces[k].base = elements.data;
    qsort(pieces, (size_t)n, sizeof(Piece), compare_encodings);
    if (out_header(&payload, n, 0x90, 16, 0xdc, 0xdd) < 0)
        goto done;
    for (Py_ssize_t k = 0; k < n; k++)
        if (out_bytes(&payload, elements.data + pieces[k].start, pieces[k].size) < 0)
            goto done;
    Py_ssize_t size = payload.size;
    int fixed = size == 1 ? 0xd4 : size == 2 ? 0xd5 : size == 4 ? 0xd6 : size == 8 ? 0xd7
                : size == 16 ? 0xd8 : 0;
    if (fixed) {
        if (out_byte(b, (unsigned char)fixed) < 0)
            goto done;
    } else if (size < 256) {
        if (out_be(b, 0xc7, (uint64_t)size, 1) < 0)
            goto done;
    } else if (size < 65536) {
        if (out_be(b, 0xc8, (uint64_t)size, 2) < 0)
            goto done;
    } else if (out_be(b, 0xc9, (uint64_t)size, 4) < 0) {
        goto done;
    }
    if (out_byte(b, 1) < 0 || out_bytes(b, payload.data, size) < 0)
        goto done;
    status = 0;
done:
    OUT_FREE(payload);
    OUT_FREE(elements);
    if (pieces != few)
        PyMem_Free(pieces);
    return status;
}

typedef struct {
    PyObject *keys, *image; /* borrowed: alive throughout a call, which empties the table */
    int moved, texts;
} KeysSeen;
#define KEYS_SLOTS 64
static KeysSeen KEYS_SEEN[KEYS_SLOTS];

/* A key of a record or map: renamed, but not the state's own keys (at depth 0). */
static int
put_key(Out *b, PyObject *key, PyObject *image, int depth)
{
    if (depth > 0)
        return put_renamed(b, key, image, depth + 1);
    return PyUnicode_CheckExact(key) ? out_text(b, key) : out_atom(b, key);
}

/* A record or map (keys, and values from values[offset]): its keys renamed (but the
 * state's own, at depth 0: its variables' names), in canonical order (checker.values.encoding.canonical_order: str order when every key is a str, else
 * that of their encodings; keys that are all ints or bools are never renamed, so keep
 * theirs). */
static int
put_renamed_map(Out *b, PyObject *keys, PyObject *values, Py_ssize_t offset, PyObject *image,
                int depth)
{
    Py_ssize_t n = PyTuple_GET_SIZE(keys);
    int moved = 0, texts = 1;
    /* Whether the image moves any of these keys: remembered in this call (a state has few
     * shapes of records, and its objects and the images live throughout the call). */
    KeysSeen *seen = &KEYS_SEEN[(((uintptr_t)keys >> 4) ^ ((uintptr_t)image >> 4)) & (KEYS_SLOTS - 1)];
    if (depth > 0 && seen->keys == keys && seen->image == image) {
        moved = seen->moved;
        texts = seen->texts;
        goto known;
    }
    for (Py_ssize_t i = 0; i < n && depth > 0; i++) {
        PyObject *key = PyTuple_GET_ITEM(keys, i);
        if (!PyUnicode_CheckExact(key)) {
            texts = 0;
            if (!PyLong_Check(key))
                moved = 1; /* a tuple or record key may hold names: sorted by encoding */
            continue;
        }
        PyObject *to = renamed_atom(key, image);
        if (to == NULL)
            return -1;
        if (to != key)
            moved = 1;
    }
    if (PyErr_Occurred())
        return -1;
    if (depth > 0) {
        seen->keys = keys;
        seen->image = image;
        seen->moved = moved;
        seen->texts = texts;
    }
known:
    if (out_header(b, n, 0x80, 16, 0xde, 0xdf) < 0)
        return -1;
    if (!moved) {
        for (Py_ssize_t i = 0; i < n; i++)
            if (put_key(b, PyTuple_GET_ITEM(keys, i), image, depth) < 0 ||
                put_renamed(b, PyTuple_GET_ITEM(values, offset + i), image, depth + 1) < 0)
                return -1;
        return 0;
    }
    Out scratch;
    OUT_INIT(scratch);
    Piece few[PIECES];
    Piece *pieces = n <= PIECES ? few : PyMem_Malloc(sizeof(Piece) * n);
    if (pieces == NULL) {
        PyErr_NoMemory();
        return -1;
    }
    int status = -1;
    for (Py_ssize_t i = 0; i < n; i++) {
        PyObject *key = PyTuple_GET_ITEM(keys, i);
        pieces[i].start = scratch.size;
        if (put_renamed(&scratch, key, image, depth + 1) < 0)
            goto done;
        pieces[i].size = scratch.size - pieces[i].start;
        if (put_renamed(&scratch, PyTuple_GET_ITEM(values, offset + i), image, depth + 1) < 0)
            goto done;
        pieces[i].whole = scratch.size - pieces[i].start;
        pieces[i].text = NULL;
        pieces[i].text_size = 0;
        if (texts) {
            PyObject *to = renamed_atom(key, image);
            if (to == NULL || !PyUnicode_CheckExact(to))
                goto done;
            pieces[i].text = PyUnicode_AsUTF8AndSize(to, &pieces[i].text_size);
            if (pieces[i].text == NULL)
                goto done;
        }
    }
    for (Py_ssize_t k = 0; k < n; k++)
        pieces[k].base = scratch.data;
    qsort(pieces, (size_t)n, sizeof(Piece), texts ? compare_texts : compare_encodings);
    for (Py_ssize_t k = 0; k < n; k++)
        if (out_bytes(b, scratch.data + pieces[k].start, pieces[k].whole) < 0)
            goto done;
    status = 0;
done:
    if (status < 0 && !PyErr_Occurred())
        PyErr_SetString(STATE_ERROR, "renamed_encodings: a key renamed to a non-str");
    OUT_FREE(scratch);
    if (pieces != few)
        PyMem_Free(pieces);
    return status;
}

static int
put_renamed(Out *b, PyObject *value, PyObject *image, int depth)
{
    if (depth > 500) {
        PyErr_SetString(STATE_ERROR, "a state value nested deeper than 500 levels");
        return -1;
    }
    PyTypeObject *type = Py_TYPE(value);
    if (type == &PyUnicode_Type) {
        PyObject *to = renamed_atom(value, image);
        if (to == NULL)
            return -1;
        return PyUnicode_CheckExact(to) ? out_text(b, to) : out_plain(b, to);
    }
    if (type == &PyTuple_Type) {
        Py_ssize_t n = PyTuple_GET_SIZE(value);
        if (out_header(b, n, 0x90, 16, 0xdc, 0xdd) < 0)
            return -1;
        for (Py_ssize_t i = 0; i < n; i++)
            if (put_renamed(b, PyTuple_GET_ITEM(value, i), image, depth + 1) < 0)
                return -1;
        return 0;
    }
    if (type == &PyFrozenSet_Type)
        return put_renamed_set(b, value, image, depth);
    if (PyType_IsSubtype(type, &RecordBase)) {
        if (type == MAP)
            return put_renamed_map(b, PyTuple_GET_ITEM(value, 1), PyTuple_GET_ITEM(value, 2), 0,
                                   image, depth);
        PyObject *keys = _PyType_Lookup(type, STR_KEYS); /* borrowed */
        if (keys == NULL || !PyTuple_CheckExact(keys) ||
            PyTuple_GET_SIZE(keys) + 1 != PyTuple_GET_SIZE(value))
            return out_atom(b, value); /* encode()'s error */
        return put_renamed_map(b, keys, value, 1, image, depth);
    }
    return out_plain(b, value);
}

PyObject *
hot_renamed_encodings(PyObject *module, PyObject *const *args, Py_ssize_t nargs)
{
    if (nargs != 2 || !PyTuple_CheckExact(args[1])) {
        PyErr_SetString(PyExc_TypeError,
                        "renamed_encodings(state, images): images is a tuple of dicts");
        return NULL;
    }
    (void)module;
    PyObject *state = args[0], *images = args[1];
    Py_ssize_t count = PyTuple_GET_SIZE(images);
    NAMED = 0;
    for (Py_ssize_t k = 0; k < count; k++) {
        PyObject *image = PyTuple_GET_ITEM(images, k), *key, *value;
        if (!PyDict_CheckExact(image)) {
            PyErr_SetString(PyExc_TypeError, "renamed_encodings(): each image is a dict");
            return NULL;
        }
        Py_ssize_t pos = 0;
        while (PyDict_Next(image, &pos, &key, &value)) {
            Py_hash_t hash = PyObject_Hash(key);
            if (hash == -1)
                return NULL;
            NAMED |= hash_bit(hash);
        }
    }
    read_all(state);
    memset(KEYS_SEEN, 0, sizeof KEYS_SEEN);
    PyObject *out = PyList_New(count);
    if (out == NULL)
        return NULL;
    Out b;
    OUT_INIT(b);
    for (Py_ssize_t k = 0; k < count; k++) {
        b.size = 0;
        PyObject *data = NULL;
        if (put_renamed(&b, state, PyTuple_GET_ITEM(images, k), 0) == 0)
            data = PyBytes_FromStringAndSize(b.data, b.size);
        if (data == NULL) {
            Py_CLEAR(out);
            break;
        }
        PyList_SET_ITEM(out, k, data);
    }
    OUT_FREE(b);
    return out;
}

/* -- signatures: each model value's signature in a state (checker.symmetry.Signatures) -----
 *
 * signatures(state, markers) -> dict: for each model value (a key of `markers`, str ->
 * bytes: its set's marker), the sorted list of its occurrences in `state`, each the bytes of
 * its path from the state's variable with what surrounds it blinded (every model value
 * replaced by its marker). The same bytes as the Python twin's, which says what they mean. */

static int blind(Out *b, PyObject *x, PyObject *markers, int depth);

static int
is_container(PyObject *x)
{
    PyTypeObject *type = Py_TYPE(x);
    return type == &PyTuple_Type || type == &PyFrozenSet_Type ||
           PyType_IsSubtype(type, &RecordBase);
}

/* The keys and values of a record or map (borrowed), values from values[offset]; 0 if `x` is
 * neither. */
static int
items_of(PyObject *x, PyObject **keys, PyObject **values, Py_ssize_t *offset)
{
    PyTypeObject *type = Py_TYPE(x);
    if (type == MAP) {
        *keys = PyTuple_GET_ITEM(x, 1);
        *values = PyTuple_GET_ITEM(x, 2);
        *offset = 0;
        return 1;
    }
    PyObject *found = _PyType_Lookup(type, STR_KEYS); /* borrowed */
    if (found == NULL || !PyTuple_CheckExact(found) ||
        PyTuple_GET_SIZE(found) + 1 != PyTuple_GET_SIZE(x)) {
        PyErr_Format(STATE_ERROR, "a %s with no field names", type->tp_name);
        return 0;
    }
    *keys = found;
    *values = x;
    *offset = 1;
    return 1;
}

/* The parts of a set or map (their blinded bytes in `scratch`), sorted and joined with
 * commas between `open` and `close`. */
static int
put_sorted(Out *b, Out *scratch, Piece *pieces, Py_ssize_t n, char open, char close)
{
    for (Py_ssize_t k = 0; k < n; k++)
        pieces[k].base = scratch->data;
    qsort(pieces, (size_t)n, sizeof(Piece), compare_encodings);
    if (out_byte(b, (unsigned char)open) < 0)
        return -1;
    for (Py_ssize_t k = 0; k < n; k++)
        if ((k > 0 && out_byte(b, ',') < 0) ||
            out_bytes(b, scratch->data + pieces[k].start, pieces[k].size) < 0)
            return -1;
    return out_byte(b, (unsigned char)close);
}

static int
blind(Out *b, PyObject *x, PyObject *markers, int depth)
{
    if (depth > 500) {
        PyErr_SetString(STATE_ERROR, "a state value nested deeper than 500 levels");
        return -1;
    }
    PyTypeObject *type = Py_TYPE(x);
    if (type == &PyUnicode_Type) {
        PyObject *marker = PyDict_GetItemWithError(markers, x); /* borrowed */
        if (marker != NULL && PyBytes_Check(marker))
            return out_bytes(b, PyBytes_AS_STRING(marker), PyBytes_GET_SIZE(marker));
        return PyErr_Occurred() ? -1 : out_text(b, x);
    }
    if (type == &PyTuple_Type) {
        if (out_byte(b, '(') < 0)
            return -1;
        for (Py_ssize_t i = 0; i < PyTuple_GET_SIZE(x); i++)
            if ((i > 0 && out_byte(b, ',') < 0) ||
                blind(b, PyTuple_GET_ITEM(x, i), markers, depth + 1) < 0)
                return -1;
        return out_byte(b, ')');
    }
    int is_set = type == &PyFrozenSet_Type;
    if (!is_set && !PyType_IsSubtype(type, &RecordBase))
        return out_plain(b, x);
    PyObject *keys = NULL, *values = NULL;
    Py_ssize_t offset = 0, n;
    if (is_set) {
        n = PySet_GET_SIZE(x);
    } else {
        if (!items_of(x, &keys, &values, &offset))
            return -1;
        n = PyTuple_GET_SIZE(keys);
    }
    Out scratch;
    OUT_INIT(scratch);
    Piece few[PIECES];
    Piece *pieces = n <= PIECES ? few : PyMem_Malloc(sizeof(Piece) * n);
    if (pieces == NULL) {
        PyErr_NoMemory();
        return -1;
    }
    int status = -1;
    if (is_set) {
        PyObject *iterator = PyObject_GetIter(x), *item;
        if (iterator == NULL)
            goto done;
        Py_ssize_t i = 0;
        while (i < n && (item = PyIter_Next(iterator)) != NULL) {
            pieces[i].start = scratch.size;
            int failed = blind(&scratch, item, markers, depth + 1) < 0;
            Py_DECREF(item);
            if (failed) {
                Py_DECREF(iterator);
                goto done;
            }
            pieces[i].size = scratch.size - pieces[i].start;
            i++;
        }
        Py_DECREF(iterator);
        if (PyErr_Occurred())
            goto done;
    } else {
        for (Py_ssize_t i = 0; i < n; i++) {
            pieces[i].start = scratch.size;
            if (blind(&scratch, PyTuple_GET_ITEM(keys, i), markers, depth + 1) < 0 ||
                out_byte(&scratch, ':') < 0 ||
                blind(&scratch, PyTuple_GET_ITEM(values, offset + i), markers, depth + 1) < 0)
                goto done;
            pieces[i].size = scratch.size - pieces[i].start;
        }
    }
    status = put_sorted(b, &scratch, pieces, n, is_set ? '{' : '[', is_set ? '}' : ']');
done:
    OUT_FREE(scratch);
    if (pieces != few)
        PyMem_Free(pieces);
    return status;
}

/* Note an occurrence of model value `v` at `path`: found[v].append(bytes(path)). */
static int
note(PyObject *found, PyObject *v, Out *path)
{
    PyObject *places = PyDict_GetItemWithError(found, v); /* borrowed */
    if (places == NULL)
        return PyErr_Occurred() ? -1 : 0;
    PyObject *at = PyBytes_FromStringAndSize(path->data, path->size);
    if (at == NULL)
        return -1;
    int status = PyList_Append(places, at);
    Py_DECREF(at);
    return status;
}

static int walk(Out *path, PyObject *x, PyObject *markers, PyObject *found, int depth);

/* Python's Signatures._add: v reached by the step already on `path`, described by `beside`
 * (blinded, unless NULL) when v is a model value or holds some. */
static int
add(Out *path, PyObject *v, PyObject *beside, PyObject *markers, PyObject *found, int depth)
{
    Py_ssize_t mark = path->size;
    int status = 0;
    if (PyUnicode_CheckExact(v)) {
        int named = PyDict_Contains(markers, v);
        if (named < 0)
            return -1;
        if (named) {
            status = (beside == NULL ? 0 : blind(path, beside, markers, depth + 1));
            if (status == 0)
                status = note(found, v, path);
        }
    } else if (is_container(v)) {
        status = beside == NULL ? 0 : blind(path, beside, markers, depth + 1);
        if (status == 0)
            status = walk(path, v, markers, found, depth + 1);
    }
    path->size = mark;
    return status;
}

/* Every occurrence of a model value inside container `x`, at `path` (restored on return). */
static int
walk(Out *path, PyObject *x, PyObject *markers, PyObject *found, int depth)
{
    if (depth > 500) {
        PyErr_SetString(STATE_ERROR, "a state value nested deeper than 500 levels");
        return -1;
    }
    Py_ssize_t mark = path->size;
    PyTypeObject *type = Py_TYPE(x);
    int status = 0;
    if (type == &PyTuple_Type) {
        for (Py_ssize_t i = 0; status == 0 && i < PyTuple_GET_SIZE(x); i++) {
            char step[32];
            int n = snprintf(step, sizeof step, "/%zd", i);
            path->size = mark;
            status = out_bytes(path, step, n);
            if (status == 0)
                status = add(path, PyTuple_GET_ITEM(x, i), NULL, markers, found, depth);
        }
    } else if (type == &PyFrozenSet_Type) {
        PyObject *iterator = PyObject_GetIter(x), *item;
        if (iterator == NULL)
            return -1;
        while (status == 0 && (item = PyIter_Next(iterator)) != NULL) {
            path->size = mark;
            status = out_bytes(path, "/e", 2);
            if (status == 0)
                status = add(path, item, item, markers, found, depth);
            Py_DECREF(item);
        }
        Py_DECREF(iterator);
        if (status == 0 && PyErr_Occurred())
            status = -1;
    } else {
        PyObject *keys, *values;
        Py_ssize_t offset;
        if (!items_of(x, &keys, &values, &offset))
            return -1;
        for (Py_ssize_t i = 0; status == 0 && i < PyTuple_GET_SIZE(keys); i++) {
            PyObject *k = PyTuple_GET_ITEM(keys, i), *v = PyTuple_GET_ITEM(values, offset + i);
            path->size = mark;
            status = out_bytes(path, "/k", 2);
            if (status == 0)
                status = add(path, k, v, markers, found, depth);
            path->size = mark;
            if (status == 0)
                status = out_bytes(path, "/v", 2);
            if (status == 0)
                status = add(path, v, k, markers, found, depth);
        }
    }
    path->size = mark;
    return status;
}

PyObject *
hot_signatures(PyObject *module, PyObject *const *args, Py_ssize_t nargs)
{
    (void)module;
    if (nargs != 2 || !PyDict_CheckExact(args[1])) {
        PyErr_SetString(PyExc_TypeError, "signatures(state, markers): markers is a dict");
        return NULL;
    }
    PyObject *state = args[0], *markers = args[1];
    PyObject *keys, *values;
    Py_ssize_t offset;
    if (!PyType_IsSubtype(Py_TYPE(state), &RecordBase)) {
        PyErr_SetString(PyExc_TypeError, "signatures(state, markers): state is a Record");
        return NULL;
    }
    read_all(state);
    if (!items_of(state, &keys, &values, &offset))
        return NULL;
    PyObject *found = PyDict_New();
    if (found == NULL)
        return NULL;
    PyObject *v, *marker;
    Py_ssize_t pos = 0;
    while (PyDict_Next(markers, &pos, &v, &marker)) {
        PyObject *places = PyList_New(0);
        if (places == NULL || PyDict_SetItem(found, v, places) < 0) {
            Py_XDECREF(places);
            Py_DECREF(found);
            return NULL;
        }
        Py_DECREF(places);
    }
    Out path;
    OUT_INIT(path);
    int status = 0;
    for (Py_ssize_t i = 0; status == 0 && i < PyTuple_GET_SIZE(keys); i++) {
        PyObject *name = PyTuple_GET_ITEM(keys, i), *value = PyTuple_GET_ITEM(values, offset + i);
        if (!PyUnicode_CheckExact(name))
            continue; /* (a state's variables are named by strs) */
        Py_ssize_t size;
        const char *text = PyUnicode_AsUTF8AndSize(name, &size);
        path.size = 0;
        status = text == NULL ? -1 : out_bytes(&path, text, size);
        if (status < 0)
            break;
        if (PyUnicode_CheckExact(value)) {
            int named = PyDict_Contains(markers, value);
            status = named < 0 ? -1 : named ? note(found, value, &path) : 0;
        } else if (is_container(value)) {
            status = walk(&path, value, markers, found, 1);
        }
    }
    OUT_FREE(path);
    pos = 0;
    PyObject *places;
    while (status == 0 && PyDict_Next(found, &pos, &v, &places))
        status = PyList_Sort(places);
    if (status < 0) {
        Py_DECREF(found);
        return NULL;
    }
    return found;
}
