#include "hot.h"

/* -- signatures: each model value's signature in a state (checker.symmetry.Signatures) -----
 *
 * signatures(state, markers) -> dict: for each model value (a key of `markers`, str ->
 * bytes: its set's marker), the sorted list of its occurrences in `state`, each the bytes of
 * its path from the state's variable with what surrounds it blinded (every model value
 * replaced by its marker). The same bytes as the Python twin's, which says what they mean. */

static int blind(Buffer *b, PyObject *x, PyObject *markers, int depth);

/* A set's or map's parts are blinded on the stack while they fit here. */
#define STACK 512

/* A frozenset's element, blinded (ElementWriter). */
static int
blinded(Buffer *b, PyObject *element, void *markers, int depth)
{
    return blind(b, element, markers, depth);
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
    PyObject *names = _PyType_Lookup(type, STR_KEYS); /* borrowed */
    if (names == NULL || !PyTuple_CheckExact(names) ||
        PyTuple_GET_SIZE(names) + 1 != PyTuple_GET_SIZE(x)) {
        PyErr_Format(STATE_ERROR, "a %s with no field names", type->tp_name);
        return 0;
    }
    *keys = names;
    *values = x;
    *offset = 1;
    return 1;
}

/* The parts of a set or map (their blinded bytes in `scratch`), sorted and joined with
 * commas between `open` and `close`. */
static int
put_sorted(Buffer *b, Buffer *scratch, Span *spans, Py_ssize_t n, char open, char close)
{
    for (Py_ssize_t k = 0; k < n; k++)
        spans[k].base = scratch->data;
    qsort(spans, (size_t)n, sizeof(Span), compare_spans);
    if (put_byte(b, (unsigned char)open) < 0)
        return -1;
    for (Py_ssize_t k = 0; k < n; k++)
        if ((k > 0 && put_byte(b, ',') < 0) ||
            put_bytes(b, scratch->data + spans[k].start, spans[k].size) < 0)
            return -1;
    return put_byte(b, (unsigned char)close);
}

static int
blind(Buffer *b, PyObject *x, PyObject *markers, int depth)
{
    if (too_deep(depth))
        return -1;
    PyTypeObject *type = Py_TYPE(x);
    if (type == &PyUnicode_Type) {
        PyObject *marker = PyDict_GetItemWithError(markers, x); /* borrowed */
        if (marker != NULL && PyBytes_Check(marker))
            return put_bytes(b, PyBytes_AS_STRING(marker), PyBytes_GET_SIZE(marker));
        return PyErr_Occurred() ? -1 : put_atom(b, x);
    }
    if (type == &PyTuple_Type) {
        if (put_byte(b, '(') < 0)
            return -1;
        for (Py_ssize_t i = 0; i < PyTuple_GET_SIZE(x); i++)
            if ((i > 0 && put_byte(b, ',') < 0) ||
                blind(b, PyTuple_GET_ITEM(x, i), markers, depth + 1) < 0)
                return -1;
        return put_byte(b, ')');
    }
    int is_set = type == &PyFrozenSet_Type;
    if (!is_set && !PyType_IsSubtype(type, &RecordBase))
        return put_atom(b, x);
    PyObject *keys = NULL, *values = NULL;
    Py_ssize_t offset = 0, n;
    if (is_set) {
        n = PySet_GET_SIZE(x);
    } else {
        if (!items_of(x, &keys, &values, &offset))
            return -1;
        n = PyTuple_GET_SIZE(keys);
    }
    char stack[STACK];
    Buffer scratch;
    BUFFER_ON(scratch, stack);
    Span few[SPANS], *spans = spans_for(n, few);
    if (spans == NULL)
        return -1;
    int status = -1;
    if (is_set) {
        if (put_elements(&scratch, spans, x, n, blinded, markers, depth + 1) < 0)
            goto done;
    } else {
        for (Py_ssize_t i = 0; i < n; i++) {
            spans[i].start = scratch.size;
            if (blind(&scratch, PyTuple_GET_ITEM(keys, i), markers, depth + 1) < 0 ||
                put_byte(&scratch, ':') < 0 ||
                blind(&scratch, PyTuple_GET_ITEM(values, offset + i), markers, depth + 1) < 0)
                goto done;
            spans[i].size = scratch.size - spans[i].start;
        }
    }
    status = put_sorted(b, &scratch, spans, n, is_set ? '{' : '[', is_set ? '}' : ']');
done:
    buffer_free(&scratch);
    spans_free(spans, few);
    return status;
}

/* Note an occurrence of model value `v` at `path`: occurrences[v].append(bytes(path)). */
static int
note(PyObject *occurrences, PyObject *v, Buffer *path)
{
    PyObject *places = PyDict_GetItemWithError(occurrences, v); /* borrowed */
    if (places == NULL)
        return PyErr_Occurred() ? -1 : 0;
    PyObject *at = PyBytes_FromStringAndSize(path->data, path->size);
    if (at == NULL)
        return -1;
    int status = PyList_Append(places, at);
    Py_DECREF(at);
    return status;
}

static int walk(Buffer *path, PyObject *x, PyObject *markers, PyObject *occurrences,
                int depth);

/* Python's Signatures._add: v reached by the step already on `path`, described by `beside`
 * (blinded, unless NULL) when v is a model value or holds some. */
static int
add(Buffer *path, PyObject *v, PyObject *beside, PyObject *markers, PyObject *occurrences,
    int depth)
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
                status = note(occurrences, v, path);
        }
    } else if (is_container(Py_TYPE(v))) {
        status = beside == NULL ? 0 : blind(path, beside, markers, depth + 1);
        if (status == 0)
            status = walk(path, v, markers, occurrences, depth + 1);
    }
    path->size = mark;
    return status;
}

/* Every occurrence of a model value inside container `x`, at `path` (restored on return). */
static int
walk(Buffer *path, PyObject *x, PyObject *markers, PyObject *occurrences, int depth)
{
    if (too_deep(depth))
        return -1;
    Py_ssize_t mark = path->size;
    PyTypeObject *type = Py_TYPE(x);
    int status = 0;
    if (type == &PyTuple_Type) {
        for (Py_ssize_t i = 0; status == 0 && i < PyTuple_GET_SIZE(x); i++) {
            char step[32];
            int n = snprintf(step, sizeof step, "/%zd", i);
            path->size = mark;
            status = put_bytes(path, step, n);
            if (status == 0)
                status = add(path, PyTuple_GET_ITEM(x, i), NULL, markers, occurrences, depth);
        }
    } else if (type == &PyFrozenSet_Type) {
        PyObject *iterator = PyObject_GetIter(x), *item;
        if (iterator == NULL)
            return -1;
        while (status == 0 && (item = PyIter_Next(iterator)) != NULL) {
            path->size = mark;
            status = put_bytes(path, "/e", 2);
            if (status == 0)
                status = add(path, item, item, markers, occurrences, depth);
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
            status = put_bytes(path, "/k", 2);
            if (status == 0)
                status = add(path, k, v, markers, occurrences, depth);
            path->size = mark;
            if (status == 0)
                status = put_bytes(path, "/v", 2);
            if (status == 0)
                status = add(path, v, k, markers, occurrences, depth);
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
    PyObject *occurrences = PyDict_New();
    if (occurrences == NULL)
        return NULL;
    PyObject *v, *marker;
    Py_ssize_t pos = 0;
    while (PyDict_Next(markers, &pos, &v, &marker)) {
        PyObject *places = PyList_New(0);
        if (places == NULL || PyDict_SetItem(occurrences, v, places) < 0) {
            Py_XDECREF(places);
            Py_DECREF(occurrences);
            return NULL;
        }
        Py_DECREF(places);
    }
    char stack[STACK];
    Buffer path;
    BUFFER_ON(path, stack);
    int status = 0;
    for (Py_ssize_t i = 0; status == 0 && i < PyTuple_GET_SIZE(keys); i++) {
        PyObject *name = PyTuple_GET_ITEM(keys, i), *value = PyTuple_GET_ITEM(values, offset + i);
        if (!PyUnicode_CheckExact(name))
            continue; /* (a state's variables are named by strs) */
        Py_ssize_t size;
        const char *text = PyUnicode_AsUTF8AndSize(name, &size);
        path.size = 0;
        status = text == NULL ? -1 : put_bytes(&path, text, size);
        if (status < 0)
            break;
        if (PyUnicode_CheckExact(value)) {
            int named = PyDict_Contains(markers, value);
            status = named < 0 ? -1 : named ? note(occurrences, value, &path) : 0;
        } else if (is_container(Py_TYPE(value))) {
            status = walk(&path, value, markers, occurrences, 1);
        }
    }
    buffer_free(&path);
    pos = 0;
    PyObject *places;
    while (status == 0 && PyDict_Next(occurrences, &pos, &v, &places))
        status = PyList_Sort(places);
    if (status < 0) {
        Py_DECREF(occurrences);
        return NULL;
    }
    return occurrences;
}
