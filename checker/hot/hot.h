/* checker._hot: the engine's hot path in C, with the same behaviour as the Python twins it
 * replaces. checker.values.fast is the one module importing it. Its files, by job (setup.py
 * builds them into one extension; this header is what they share):
 *
 * - records.c: RecordBase, the tuple type every Record shape derives from (`replace`, the
 *   mapping API, a kept hash), the fields that note reads (checker.values.record).
 * - builders.c: RecordType (Record(...)); new, take, without, freeze: building records and
 *   tuples (checker.values.record).
 * - candidates.c: candidates, the initial states of an `every` (checker.values.every) built
 *   from their numbers in the product of its domains and filtered by its `where`.
 * - put.c: put, update (TLA+'s EXCEPT with @ along a path) and without's Maps: a container
 *   with one key's value set, a key added or keys removed in canonical order
 *   (checker.values.record).
 * - once.c: OncePerState, a state predicate evaluated once per state, its reads given again
 *   to a second call (checker.compiled).
 * - kinds.c: conforms, whether a value is of its kind (checker.values.kinds).
 * - encode.c: encode, encode_state, the canonical msgpack bytes of checker.values.encoding,
 *   and encoded: candidates' encodings and fingerprints. Its writers (a Buffer's put_*) are
 *   in this header, shared with symmetry.c and signatures.c.
 * - decode.c: decode, decode_all, those bytes back into values (records by their shape).
 * - readsets.c: incremental evaluation's read sets (docs/architecture.md): holds, verdicts,
 *   read_sets_of, changed (checker.model.readsets).
 * - domains.c: an action's bindings in a state, its domains' values in canonical order
 *   (checker.compiled.Action.bindings), for successors.c.
 * - successors.c: successors, one state's successors (checker.model.transitions), and the
 *   context expand_run reads of a model.
 * - expansion.c: dedupe, those not met before (checker.model.dedupe); expand_run, a run of
 *   states expanded (checker.model.expansion), reading the model's Context by name.
 * - module.c: configure (what the Python modules hand over), rename (a symmetry's renaming),
 *   the method table.
 * - symmetry.c: renamed_encodings, a state's encodings with its model values renamed
 *   (checker.symmetry: symmetry over model values).
 * - signatures.c: signatures, each model value's occurrences in a state, blinded
 *   (checker.symmetry.Signatures).
 *
 * The Python modules hand over what this module needs (their types, sets and fallbacks) with
 * configure(...) when they are imported (checker.values.fast.configure_records).
 * MC_PURE_PYTHON=1 keeps the module from being used.
 */
#ifndef MC_HOT_H
#define MC_HOT_H

#define PY_SSIZE_T_CLEAN
#include <Python.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>
#include <structmember.h>

/* What the files share stays inside the extension: hidden, so that calls between them are
 * direct (no lookup through the symbol table) and no name leaks out of the module. */
#if defined(__GNUC__) || defined(__clang__)
#define HOT_SHARED __attribute__((visibility("hidden")))
#else
#define HOT_SHARED
#endif

/* -- what checker.values.record and checker.values.encoding hand over (module.c) ---------- */

HOT_SHARED extern PyObject *FROZEN;      /* set of types replace() and put() take as they are */
HOT_SHARED extern PyObject *ATOMS;       /* set of types Record() takes as they are */
/* checker.values.record.freeze_python: what freeze_value (builders.c) leaves to Python */
HOT_SHARED extern PyObject *FREEZE;
/* checker.values.record._raise_unknown(record, changes): raises */
HOT_SHARED extern PyObject *UNKNOWN;
HOT_SHARED extern PyObject *PUT_SLOW;    /* checker.values.record.put_python (records and maps) */
HOT_SHARED extern PyObject *STATE_ERROR; /* checker.values.record.StateError */
/* checker.values.record._no_field(record, name): AttributeError */
HOT_SHARED extern PyObject *NO_FIELD;
/* checker.values.record.without_python (maps, anything else) */
HOT_SHARED extern PyObject *WITHOUT_SLOW;
/* checker.values.record.drop_plan(shape, keys) -> (shape, indices) */
HOT_SHARED extern PyObject *DROP_PLAN;
HOT_SHARED extern PyTypeObject *MAP;     /* checker.values.record.Map */

/* A new instance of `type` (a tuple subclass) with room for n items, all NULL. */
static inline PyObject *
alloc(PyTypeObject *type, Py_ssize_t n)
{
    return type->tp_alloc(type, n);
}

/* Whether `value` is of a type of checker.values.record.ATOMS that is no record shape (the
 * shapes are in ATOMS too). */
static inline int
is_atom(PyObject *value)
{
    PyTypeObject *type = Py_TYPE(value);
    return type == &PyLong_Type || type == &PyUnicode_Type || value == Py_None ||
           type == &PyBool_Type || type == &PyBytes_Type || type == MAP;
}

/* Whether a record is a Map (the tuple (Map, keys, values)), not a record of a shape. */
static inline int
is_map(PyObject *self)
{
    return Py_TYPE(self) == MAP;
}
HOT_SHARED extern PyObject *STR_INDEX;   /* "_index" */
HOT_SHARED extern PyObject *STR_KEYS;    /* "_keys" */
HOT_SHARED extern PyObject *STR_BINDINGS; /* "bindings" */
HOT_SHARED extern PyObject *STR_ORDERED;  /* "ordered" */
HOT_SHARED extern PyObject *STR_DOMAIN_FAILED; /* "domain_failed" */

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

/* the states' shape while spec code is watched, else NULL */
HOT_SHARED extern PyTypeObject *TRACKED;
HOT_SHARED extern uint64_t READS; /* the variables read since the engine last cleared it */
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

/* The slots of a cache by identity filled since it was last emptied (forget_encodings, at
 * the end of each search), so that emptying it costs what the search put there, not a walk
 * over every slot (0.7 M instructions, 7 % of die_hard's search). Past FILLED_MAX of them,
 * every slot is walked. */
#define FILLED_MAX 4096
typedef struct {
    Py_ssize_t count;
    uint32_t at[FILLED_MAX];
} Filled;

static inline void
note_filled(Filled *filled, Py_ssize_t index)
{
    if (filled->count < FILLED_MAX)
        filled->at[filled->count] = (uint32_t)index;
    filled->count++;
}

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

/* Incremental evaluation (docs/architecture.md): `before` has, per slot (an action's
 * binding from a fixed domain, in the plan's order), the parent's mask: MARK and the variables
 * the binding's guard read if it was disabled there, else 0; `changed` the variables that
 * differ between the parent and this state. A binding disabled in the parent whose guard read
 * none of the changed variables computes the same here: it is disabled, and not called. `out`
 * gets this state's masks. */
static inline int
still_disabled(const char *before, uint64_t changed, char *out, Py_ssize_t slot)
{
    uint64_t was = 0;
    if (before != NULL)
        memcpy(&was, before + 8 * slot, 8);
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

/* -- msgpack writers (encode.c's canonical bytes; symmetry.c and signatures.c write them too)
 *
 * A Buffer grows on the heap (PyMem), from `stack` when it was started on the caller's array
 * (BUFFER_ON: no allocation for the sets and maps of a state's usual size), else from
 * nothing ({NULL, 0, 0, NULL}). */
typedef struct {
    char *data;
    Py_ssize_t size, capacity;
    char *stack; /* the caller's array it started on (never freed), or NULL */
} Buffer;

#define BUFFER_ON(b, array)                                                                  \
    ((b).data = (b).stack = (array), (b).size = 0, (b).capacity = (Py_ssize_t)sizeof(array))

static inline void
buffer_free(Buffer *b)
{
    if (b->data != b->stack)
        PyMem_Free(b->data);
}

HOT_SHARED int buffer_grow(Buffer *b, Py_ssize_t more); /* encode.c */

static inline int
put_bytes(Buffer *b, const void *bytes, Py_ssize_t n)
{
    if (b->size + n > b->capacity && buffer_grow(b, n) < 0)
        return -1;
    memcpy(b->data + b->size, bytes, n);
    b->size += n;
    return 0;
}

static inline int
put_byte(Buffer *b, unsigned char c)
{
    if (b->size + 1 > b->capacity && buffer_grow(b, 1) < 0)
        return -1;
    b->data[b->size++] = (char)c;
    return 0;
}

/* `head`, then `value`'s low `width` bytes, big-endian. */
static inline int
put_be(Buffer *b, unsigned char head, uint64_t value, int width)
{
    unsigned char out[9];
    out[0] = head;
    for (int i = 0; i < width; i++)
        out[1 + i] = (unsigned char)(value >> (8 * (width - 1 - i)));
    return put_bytes(b, out, 1 + width);
}

/* A container's header, as msgpack-python writes it. */
static inline int
put_header(Buffer *b, Py_ssize_t n, unsigned char fix, int fixlimit, unsigned char h16,
           unsigned char h32)
{
    if (n < fixlimit)
        return put_byte(b, (unsigned char)(fix | n));
    if (n < 65536)
        return put_be(b, h16, (uint64_t)n, 2);
    return put_be(b, h32, (uint64_t)n, 4);
}

/* Whether a value at `depth` is nested too deep to be part of a state (StateError set). */
static inline int
too_deep(int depth)
{
    if (depth <= 500)
        return 0;
    PyErr_SetString(STATE_ERROR, "a state value nested deeper than 500 levels");
    return 1;
}

/* A part of a Buffer (a set's element, a map's entry), sorted by its bytes. */
typedef struct {
    Py_ssize_t start, size;
    const char *base; /* set after the buffer stops moving */
} Span;
#define SPANS 32 /* a set's or map's parts sorted without an allocation */

/* Room for n Spans: `few` (SPANS of them, the caller's) when they fit, else allocated. */
static inline Span *
spans_for(Py_ssize_t n, Span *few)
{
    Span *spans = n <= SPANS ? few : PyMem_Malloc(sizeof(Span) * n);
    if (spans == NULL)
        PyErr_NoMemory();
    return spans;
}

static inline void
spans_free(Span *spans, Span *few)
{
    if (spans != few)
        PyMem_Free(spans);
}

static inline int
compare_bytes(const char *x, Py_ssize_t nx, const char *y, Py_ssize_t ny)
{
    Py_ssize_t n = nx < ny ? nx : ny;
    int c = memcmp(x, y, (size_t)n);
    if (c != 0)
        return c;
    return (nx > ny) - (nx < ny);
}

/* How a set's elements are written into a scratch buffer (encode.c's nested encoding, a
 * renamed one, a blinded one): `with` is the writer's own argument. */
typedef int (*ElementWriter)(Buffer *b, PyObject *element, void *with, int depth);

/* -- what the files call of each other (each file's own, in its order) ------------------  */

HOT_SHARED extern PyTypeObject RecordBase, FieldType; /* records.c */
HOT_SHARED extern PyTypeObject RecordType;            /* builders.c */
HOT_SHARED extern PyTypeObject OnceType;              /* once.c */
HOT_SHARED void forget_hashes(void);  /* records.c */
HOT_SHARED void forget_orders(void);  /* domains.c */

/* records.c */
HOT_SHARED PyObject *hot_field(PyObject *module, PyObject *args);
HOT_SHARED PyObject *shaped(PyTypeObject *shape, Py_ssize_t n);
HOT_SHARED PyObject *frozen(PyObject *value, PyObject *kinds);

/* builders.c */
HOT_SHARED PyObject *hot_take(PyObject *module, PyObject *const *args, Py_ssize_t nargs);
HOT_SHARED PyObject *hot_without(PyObject *module, PyObject *const *args, Py_ssize_t nargs);
HOT_SHARED PyObject *hot_factory(PyObject *module, PyObject *args);
HOT_SHARED PyObject *hot_maker(PyObject *module, PyObject *args);
HOT_SHARED PyObject *hot_new(PyObject *module, PyObject *const *args, Py_ssize_t nargs);
HOT_SHARED PyObject *shared_keys(PyObject *tuple);
HOT_SHARED PyObject *hot_freeze(PyObject *module, PyObject *value);
HOT_SHARED PyObject *freeze_value(PyObject *value);
HOT_SHARED PyObject *freeze_other(PyObject *value);

/* candidates.c */
HOT_SHARED PyObject *hot_candidates(PyObject *module, PyObject *const *args, Py_ssize_t nargs);

/* put.c */
HOT_SHARED PyObject *hot_put(PyObject *module, PyObject *const *args, Py_ssize_t nargs);
HOT_SHARED PyObject *hot_update(PyObject *module, PyObject *const *args, Py_ssize_t nargs);
HOT_SHARED PyObject *map_without(PyObject *map, PyObject *const *drop, Py_ssize_t ndrop);

/* kinds.c */
HOT_SHARED PyObject *hot_conforms(PyObject *module, PyObject *const *args, Py_ssize_t nargs);
HOT_SHARED int kind_ok(PyObject *value, PyObject *old, PyObject *kind);

/* encode.c */
HOT_SHARED PyObject *hot_forget_encodings(PyObject *module, PyObject *unused);
HOT_SHARED PyObject *hot_encode_state(PyObject *module, PyObject *state);
HOT_SHARED PyObject *hot_encoded(PyObject *module, PyObject *const *args, Py_ssize_t nargs);
HOT_SHARED PyObject *hot_encode(PyObject *module, PyObject *value);
HOT_SHARED int encode_into(PyObject *module, PyObject *states, Py_ssize_t start,
                           Py_ssize_t count, PyObject *fingerprint, PyObject *encodings,
                           PyObject *views, PyObject *identify, uint64_t *out);
/* encode()'s bytes of a value with no container in it (an atom: None, a bool, an int, a
 * str, bytes), appended; encode()'s error for anything else it refuses. */
HOT_SHARED int put_atom(Buffer *b, PyObject *value);
/* Each of the n elements of `set` written by `write` into `scratch`, spans[i] its bytes. */
HOT_SHARED int put_elements(Buffer *scratch, Span *spans, PyObject *set, Py_ssize_t n,
                            ElementWriter write, void *with, int depth);
/* A frozenset as encode() writes it (extension 1 holding an array of its elements'
 * encodings, sorted), each element written by `write` (at depth + 1). */
HOT_SHARED int put_set_with(Buffer *b, PyObject *set, ElementWriter write, void *with,
                            int depth);
HOT_SHARED int compare_spans(const void *x, const void *y);

static inline int
is_container(PyTypeObject *type)
{
    return type == &PyTuple_Type || type == &PyFrozenSet_Type ||
           PyType_IsSubtype(type, &RecordBase);
}

/* decode.c */
HOT_SHARED PyObject *hot_decode(PyObject *module, PyObject *data);
HOT_SHARED PyObject *hot_decode_all(PyObject *module, PyObject *const *args, Py_ssize_t nargs);
HOT_SHARED PyObject *hot_decoding(PyObject *module, PyObject *args);

/* readsets.c */
HOT_SHARED PyObject *hot_holds(PyObject *module, PyObject *const *args, Py_ssize_t nargs);
HOT_SHARED PyObject *hot_verdicts(PyObject *module, PyObject *const *args, Py_ssize_t nargs);
HOT_SHARED PyObject *hot_read_sets_of(PyObject *module, PyObject *const *args, Py_ssize_t nargs);
HOT_SHARED PyObject *hot_changed(PyObject *module, PyObject *const *args, Py_ssize_t nargs);
HOT_SHARED int read_set_type_ok(PyObject *type);
HOT_SHARED int append_read_sets(PyTypeObject *type, PyObject *parent, PyObject *states,
                                Py_ssize_t start, PyObject *masks, PyObject *held, PyObject *out);

/* domains.c */
HOT_SHARED PyObject *domain_values(PyObject *act, PyObject *domain_of, PyObject *state);
HOT_SHARED Py_ssize_t state_bindings(PyObject *act, PyObject *domains, PyObject *state,
                                     PyObject ***rows_out, PyObject **held_out);

/* successors.c: what successors and expand_run need of a model, read by name from one Python
 * object (checker.model.expansion.Context), kept in successors.c until another comes. */
typedef struct {
    PyObject *plan;       /* CompiledSpec.plan: (action index, bound function, arity, static
                             bindings or None, Action, domain) per action */
    PyObject *add;        /* add(ai, binding, state, result, states, actions, bindings): a
                             result that is not one successor of the state's shape */
    PyObject *reraise;    /* reraise(ai, binding, state, exc): what an action raised */
    int constrained;      /* whether there are action constraints */
    PyObject *kinds;      /* the states' kind (checker.values.kinds), or None */
    PyObject *kind_error; /* kind_error(ai, binding, state, successor) */
    PyObject *read_set;   /* the ReadSet type (expand_run) */
    PyObject *fingerprint; /* fingerprint(bytes) -> int */
    Py_ssize_t slots;     /* the guards' masks, 8 bytes each */
    int terminals;        /* whether the spec declares final states */
    PyObject *bail;       /* the errors that send a state to the general path */
    PyObject *within;     /* within(state): inside the state constraints; or None */
    PyObject *view;       /* met by views: view(successor); or None */
    PyObject *redo;       /* the errors of view or identify that send a state there */
    PyObject *identify;   /* identify(successor, encoding) -> fingerprint; or NULL */
    PyObject *broken;     /* broken(state, successors): a step breaks a step check; or None */
    PyObject *outside;    /* outside(successor): 0 within TLC's constraints, 1 outside, 2 the
                             general path's (an invariant violated there, or an error); or None */
} Context;
HOT_SHARED PyObject *attribute(PyObject *object, const char *name, PyObject **cache);
HOT_SHARED int context_of(PyObject *object, Context *out);
HOT_SHARED PyObject *successors_loop(const Context *c, PyObject *state, PyObject *states,
                                     PyObject *actions, PyObject *bindings_out,
                                     const char *before, uint64_t changed, char *out,
                                     Py_ssize_t slots);
HOT_SHARED PyObject *hot_successors(PyObject *module, PyObject *const *args, Py_ssize_t nargs);

/* expansion.c */
HOT_SHARED PyObject *hot_dedupe(PyObject *module, PyObject *const *args, Py_ssize_t nargs);
HOT_SHARED PyObject *hot_expand_run(PyObject *module, PyObject *const *args, Py_ssize_t nargs);

/* module.c */
HOT_SHARED PyObject *hot_rename(PyObject *module, PyObject *const *args, Py_ssize_t nargs);
HOT_SHARED PyObject *hot_configure(PyObject *module, PyObject *args);

/* symmetry.c */
HOT_SHARED PyObject *hot_renamed_encodings(PyObject *module, PyObject *const *args,
                                           Py_ssize_t nargs);

/* signatures.c */
HOT_SHARED PyObject *hot_signatures(PyObject *module, PyObject *const *args, Py_ssize_t nargs);

#endif
