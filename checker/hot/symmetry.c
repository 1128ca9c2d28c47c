#include "hot.h"

/* -- renamed_encodings: symmetry over model values (checker.symmetry) ----------------------
 *
 * renamed_encodings(state, images) -> list of bytes: for each dict `image` (str -> str, a
 * renaming of the symmetric model values), the canonical encoding (encode.c's bytes) of
 * `state` with every str found in `image` renamed wherever it is: a set element, a tuple
 * item, a record's or map's key or value. Sets are re-sorted and keys re-ordered canonically
 * after renaming, so the bytes are encode(renamed_python(state, image)), without building
 * the renamed state and with no Python call per image. */

/* The encodings of a state's sets and maps are written on the stack while they fit here. */
#define STACK 512

/* A bit per hash of the strs any image of the call moves (NAMED): a str whose bit is not set
 * is renamed by none, and not looked up. */
static uint64_t NAMED;

static inline uint64_t
hash_bit(Py_hash_t hash)
{
    return (uint64_t)1 << ((uint64_t)hash & 63);
}

/* `value` renamed by `image` (a borrowed reference, never NULL): a str in it is its image. A
 * failed lookup (none is known: the keys are strs) leaves its error set, for the caller's
 * PyErr_Occurred. */
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

static int put_renamed(Buffer *b, PyObject *value, PyObject *image, int depth);

/* A map's entry in the scratch buffer, sorted by its key. */
typedef struct {
    Py_ssize_t start, size; /* the key's bytes: what is sorted by */
    Py_ssize_t whole;       /* the bytes written (from start): the key's, then its value's */
    const char *text;       /* a str key's UTF-8 text (sorted by when every key is a str) */
    Py_ssize_t text_size;
    const char *base;
} Entry;
#define ENTRIES 32 /* a map's entries sorted without an allocation */

static int
compare_encodings(const void *x, const void *y)
{
    const Entry *a = x, *b = y;
    return compare_bytes(a->base + a->start, a->size, b->base + b->start, b->size);
}

static int
compare_texts(const void *x, const void *y)
{
    const Entry *a = x, *b = y;
    return compare_bytes(a->text, a->text_size, b->text, b->text_size);
}

/* A frozenset's element, renamed (ElementWriter). */
static int
renamed_element(Buffer *b, PyObject *element, void *image, int depth)
{
    return put_renamed(b, element, image, depth);
}

typedef struct {
    PyObject *keys, *image; /* borrowed: alive throughout a call, which empties the table */
    int moved, texts;
} KeysSeen;
#define KEYS_SLOTS 64
static KeysSeen KEYS_SEEN[KEYS_SLOTS];

/* A key of a record or map: renamed, but not the state's own keys (at depth 0). */
static int
put_key(Buffer *b, PyObject *key, PyObject *image, int depth)
{
    if (depth > 0)
        return put_renamed(b, key, image, depth + 1);
    return put_atom(b, key);
}

/* A record or map (keys, and values from values[offset]): its keys renamed (but the
 * state's own, at depth 0: its variables' names), in canonical order
 * (checker.values.encoding.canonical_order: str order when every key is a str, else that of
 * their encodings; keys that are all ints or bools are never renamed, so keep theirs). */
static int
put_renamed_map(Buffer *b, PyObject *keys, PyObject *values, Py_ssize_t offset,
                PyObject *image, int depth)
{
    Py_ssize_t n = PyTuple_GET_SIZE(keys);
    int moved = 0, texts = 1;
    /* Whether the image moves any of these keys: remembered in this call (a state has few
     * shapes of records, and its objects and the images live throughout the call). */
    uintptr_t slot = ((uintptr_t)keys >> 4) ^ ((uintptr_t)image >> 4);
    KeysSeen *seen = &KEYS_SEEN[slot & (KEYS_SLOTS - 1)];
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
        if (renamed_atom(key, image) != key)
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
    if (put_header(b, n, 0x80, 16, 0xde, 0xdf) < 0)
        return -1;
    if (!moved) {
        for (Py_ssize_t i = 0; i < n; i++)
            if (put_key(b, PyTuple_GET_ITEM(keys, i), image, depth) < 0 ||
                put_renamed(b, PyTuple_GET_ITEM(values, offset + i), image, depth + 1) < 0)
                return -1;
        return 0;
    }
    char stack[STACK];
    Buffer scratch;
    BUFFER_ON(scratch, stack);
    Entry few[ENTRIES];
    Entry *entries = n <= ENTRIES ? few : PyMem_Malloc(sizeof(Entry) * n);
    if (entries == NULL) {
        PyErr_NoMemory();
        return -1;
    }
    int status = -1;
    for (Py_ssize_t i = 0; i < n; i++) {
        PyObject *key = PyTuple_GET_ITEM(keys, i);
        entries[i].start = scratch.size;
        if (put_renamed(&scratch, key, image, depth + 1) < 0)
            goto done;
        entries[i].size = scratch.size - entries[i].start;
        if (put_renamed(&scratch, PyTuple_GET_ITEM(values, offset + i), image, depth + 1) < 0)
            goto done;
        entries[i].whole = scratch.size - entries[i].start;
        entries[i].text = NULL;
        entries[i].text_size = 0;
        if (texts) {
            PyObject *to = renamed_atom(key, image);
            if (!PyUnicode_CheckExact(to))
                goto done;
            entries[i].text = PyUnicode_AsUTF8AndSize(to, &entries[i].text_size);
            if (entries[i].text == NULL)
                goto done;
        }
    }
    for (Py_ssize_t k = 0; k < n; k++)
        entries[k].base = scratch.data;
    qsort(entries, (size_t)n, sizeof(Entry), texts ? compare_texts : compare_encodings);
    for (Py_ssize_t k = 0; k < n; k++)
        if (put_bytes(b, scratch.data + entries[k].start, entries[k].whole) < 0)
            goto done;
    status = 0;
done:
    if (status < 0 && !PyErr_Occurred())
        PyErr_SetString(STATE_ERROR, "renamed_encodings: a key renamed to a non-str");
    buffer_free(&scratch);
    if (entries != few)
        PyMem_Free(entries);
    return status;
}

static int
put_renamed(Buffer *b, PyObject *value, PyObject *image, int depth)
{
    if (too_deep(depth))
        return -1;
    PyTypeObject *type = Py_TYPE(value);
    if (type == &PyUnicode_Type)
        return put_atom(b, renamed_atom(value, image));
    if (type == &PyTuple_Type) {
        Py_ssize_t n = PyTuple_GET_SIZE(value);
        if (put_header(b, n, 0x90, 16, 0xdc, 0xdd) < 0)
            return -1;
        for (Py_ssize_t i = 0; i < n; i++)
            if (put_renamed(b, PyTuple_GET_ITEM(value, i), image, depth + 1) < 0)
                return -1;
        return 0;
    }
    if (type == &PyFrozenSet_Type)
        return put_set_with(b, value, renamed_element, image, depth);
    if (PyType_IsSubtype(type, &RecordBase)) {
        if (type == MAP)
            return put_renamed_map(b, PyTuple_GET_ITEM(value, 1), PyTuple_GET_ITEM(value, 2), 0,
                                   image, depth);
        PyObject *keys = _PyType_Lookup(type, STR_KEYS); /* borrowed */
        if (keys == NULL || !PyTuple_CheckExact(keys) ||
            PyTuple_GET_SIZE(keys) + 1 != PyTuple_GET_SIZE(value))
            return put_atom(b, value); /* encode()'s error */
        return put_renamed_map(b, keys, value, 1, image, depth);
    }
    return put_atom(b, value);
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
    char stack[STACK];
    Buffer b;
    BUFFER_ON(b, stack);
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
    buffer_free(&b);
    return out;
}

