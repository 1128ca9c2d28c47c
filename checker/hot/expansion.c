#include "hot.h"

/* -- dedupe and expand_run ------------------------------------------------------------- */

/* dedupe(successors, start, seen, candidates, positions, offset, parent) -> None or the index
 * of a successor that cannot be hashed (the caller freezes it and calls again from there).
 * The successors from `start` on that are not in `seen` are added to it and to `candidates`,
 * their indices plus `offset` to `positions`; a successor that is `parent` itself (a step
 * that changed nothing) is never new, and is passed over without a look-up. */
PyObject *
hot_dedupe(PyObject *module, PyObject *const *args, Py_ssize_t nargs)
{
    if (nargs != 7) {
        PyErr_SetString(PyExc_TypeError, "dedupe() takes 7 arguments");
        return NULL;
    }
    PyObject *successors = args[0], *seen = args[2], *candidates = args[3], *positions = args[4];
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
        if (position == NULL || PyList_Append(candidates, succ) < 0 ||
            PyList_Append(positions, position) < 0) {
            Py_XDECREF(position);
            return NULL;
        }
        Py_DECREF(position);
    }
    Py_RETURN_NONE;
}

/* Undo what expand_run did for the state it was expanding: the candidates (or their views)
 * it added to `seen`, to the lists from `cand0` (`made0` read_sets) on, its actions from `total`
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

/* The lists and bytearrays of a checker.model.expansion.Batch that expand_run fills, read
 * by name (new references). */
typedef struct {
    PyObject *successors, *actions, *candidates, *positions, *encodings, *read_sets, *views;
    PyObject *run_counts, *stuck, *run_fps;
} Out;

#define OUT_OBJECTS(X)                                                                        \
    X(successors) X(actions) X(candidates) X(positions) X(encodings) X(read_sets) X(views)    \
    X(run_counts) X(stuck) X(run_fps)

static void
out_clear(Out *o)
{
#define CLEAR(name) Py_CLEAR(o->name);
    OUT_OBJECTS(CLEAR)
#undef CLEAR
}

static int
out_of(PyObject *batch, Out *o)
{
#define GET(name)                                                                             \
    static PyObject *name##_name;                                                             \
    if ((o->name = attribute(batch, #name, &name##_name)) == NULL) {                          \
        out_clear(o);                                                                         \
        return -1;                                                                            \
    }
    OUT_OBJECTS(GET)
#undef GET
    if (!PyList_Check(o->successors) || !PyList_Check(o->actions) ||
        !PyList_Check(o->candidates) || !PyList_Check(o->positions) ||
        !PyList_Check(o->encodings) || !PyList_Check(o->views) ||
        (o->read_sets != Py_None && !PyList_Check(o->read_sets)) ||
        !PyByteArray_Check(o->run_counts) || !PyByteArray_Check(o->stuck) ||
        !PyByteArray_Check(o->run_fps)) {
        PyErr_SetString(PyExc_TypeError, "expand_run(): the batch's lists and bytearrays");
        out_clear(o);
        return -1;
    }
    return 0;
}

/* The truth of fn(a, b): 1, 0, or -1 (an error). */
static int
call_truth(PyObject *fn, PyObject *a, PyObject *b)
{
    PyObject *r = PyObject_CallFunctionObjArgs(fn, a, b, NULL);
    int is = r == NULL ? -1 : PyObject_IsTrue(r);
    Py_XDECREF(r);
    return is;
}

/* TLC's constraints (expand_run): the candidates from `cand0` on that `outside` puts outside
 * them are no candidates (they stay in `seen`: met, never expanded), their views and positions
 * dropped too. Returns 0, 1 when one needs the general path (an invariant it violates, or
 * an error of the constraint: nothing dropped), or -1 (an error). */
static int
drop_outside(PyObject *outside, PyObject *candidates, PyObject *views, PyObject *positions,
             Py_ssize_t cand0)
{
    Py_ssize_t n = PyList_GET_SIZE(candidates) - cand0;
    if (n <= 0)
        return 0;
    char *verdicts = PyMem_Malloc(n);
    if (verdicts == NULL) {
        PyErr_NoMemory();
        return -1;
    }
    Py_ssize_t dropping = 0;
    for (Py_ssize_t k = 0; k < n; k++) {
        PyObject *r = PyObject_CallOneArg(outside, PyList_GET_ITEM(candidates, cand0 + k));
        long verdict = r == NULL ? -1 : PyLong_AsLong(r);
        Py_XDECREF(r);
        if (verdict == -1 && PyErr_Occurred()) {
            PyMem_Free(verdicts);
            return -1;
        }
        if (verdict != 0 && verdict != 1) {
            PyMem_Free(verdicts);
            return 1;
        }
        verdicts[k] = (char)verdict;
        dropping += verdict;
    }
    for (Py_ssize_t k = n - 1; dropping > 0 && k >= 0; k--) {
        if (!verdicts[k])
            continue;
        dropping--;
        Py_ssize_t at = cand0 + k;
        if (PyList_SetSlice(candidates, at, at + 1, NULL) < 0 ||
            PyList_SetSlice(positions, at, at + 1, NULL) < 0 ||
            (views != Py_None && PyList_SetSlice(views, at, at + 1, NULL) < 0)) {
            PyMem_Free(verdicts);
            return -1;
        }
    }
    PyMem_Free(verdicts);
    return 0;
}

/* expand_run(context, batch, states, start, stop, read_sets, seen) -> next
 *
 * Model.expand_batch's common case, one state after another from states[start] to before
 * states[stop], into `batch` (a checker.model.expansion.Batch): each state's successors (in
 * batch.successors, empty before and after; their actions appended to batch.actions), those
 * neither the state itself nor in the set `seen` added to it and to batch.candidates (their
 * positions to batch.positions), each one's ReadSet to batch.read_sets when `read_sets` (one
 * per state, a ReadSet or None; context.slots masks) is given, its encoding to
 * batch.encodings. Each finished state's number of successors (uint32), whether it is stuck
 * (a byte) and its candidates' fingerprints (uint64) are appended to the bytearrays
 * batch.run_counts, batch.stuck, batch.run_fps. Returns the state it stopped before: `stop`,
 * or one that needs the caller's general path (an error of a class in context.bail, a
 * successor that cannot be hashed, a deadlock when context.terminals), undone. Any other
 * error is raised, what was done for that state undone: the caller finds the state in the
 * counts.
 *
 * context.within (or None): whether a state is within the state constraints (if not, it has
 * no successors and is not stuck). context.view (or None): successors are met by their views,
 * view(successor) frozen as freeze() does (appended to batch.views with the candidates), and
 * fingerprinted by them; a view that raises (or returns what cannot be frozen) an error of a
 * class in context.redo sends the state to the general path (which says which step built the
 * successor, and how the view failed). context.identify (or None): the candidates'
 * fingerprints are identify(candidate, its encoding) (a symmetry's representative), an error
 * of a class in context.redo sending the state to the general path too. context.broken (or
 * None): the step checks, asked of each state and its successors (true: one breaks a check, or
 * an error, which the general path raises). context.outside (or None): TLC's constraints,
 * asked of each candidate (see drop_outside). */
PyObject *
hot_expand_run(PyObject *module, PyObject *const *args, Py_ssize_t nargs)
{
    if (nargs != 7 || !PyList_Check(args[2]) || !PySet_Check(args[6]) ||
        (args[5] != Py_None && !PyList_Check(args[5]))) {
        PyErr_SetString(PyExc_TypeError,
                        "expand_run(context, batch, states, start, stop, read_sets, seen)");
        return NULL;
    }
    Context context;
    if (context_of(args[0], &context) < 0)
        return NULL;
    const Context *c = &context;
    Out o;
    if (out_of(args[1], &o) < 0)
        return NULL;
    PyObject *states = args[2], *read_sets = args[5], *seen = args[6];
    PyObject *fingerprint = c->fingerprint, *candidates = o.candidates, *positions = o.positions;
    PyObject *encodings = o.encodings, *made = o.read_sets, *counts = o.run_counts;
    PyObject *stuck = o.stuck, *fps = o.run_fps, *bail = c->bail, *within = c->within;
    PyObject *view = c->view, *views = view != Py_None ? o.views : Py_None, *redo = c->redo;
    PyObject *identify = c->identify, *broken = c->broken, *outside = c->outside;
    PyObject *successors = o.successors, *actions = o.actions;
    if (read_sets == Py_None)
        made = Py_None;
    else if (made == Py_None) {
        PyErr_SetString(PyExc_TypeError, "expand_run(): read sets given, none to make");
        out_clear(&o);
        return NULL;
    } else if (!read_set_type_ok(c->read_set)) {
        out_clear(&o);
        return NULL;
    }
    PyTypeObject *read_set_type = (PyTypeObject *)c->read_set;
    Py_ssize_t start = PyLong_AsSsize_t(args[3]), stop = PyLong_AsSsize_t(args[4]);
    Py_ssize_t slots = c->slots;
    int terminals = c->terminals;
    if ((start == -1 || stop == -1) && PyErr_Occurred()) {
        out_clear(&o);
        return NULL;
    }
    if (start < 0)
        start = 0;
    if (stop > PyList_GET_SIZE(states))
        stop = PyList_GET_SIZE(states);
    if (read_sets != Py_None && PyList_GET_SIZE(read_sets) < stop) {
        PyErr_SetString(PyExc_TypeError, "expand_run(): one read set per state");
        out_clear(&o);
        return NULL;
    }
    char *masks = PyMem_Calloc(slots ? 8 * slots : 8, 1);
    if (masks == NULL) {
        out_clear(&o);
        return PyErr_NoMemory();
    }
    int failed = 0;
    Py_ssize_t i = start;
    for (; i < stop; i++) {
        PyObject *state = PyList_GET_ITEM(states, i);
        Py_ssize_t total = PyList_GET_SIZE(actions);
        Py_ssize_t cand0 = PyList_GET_SIZE(candidates);
        Py_ssize_t made0 = made != Py_None ? PyList_GET_SIZE(made) : 0;
        PyObject *read_set = read_sets != Py_None ? PyList_GET_ITEM(read_sets, i) : Py_None;
        const char *before = NULL;
        uint64_t changed = 0;
        if (read_set != Py_None) {
            PyObject *parent = PyTuple_Check(read_set) && PyTuple_GET_SIZE(read_set) == 3
                                   ? PyTuple_GET_ITEM(read_set, 0) : NULL;
            if (parent == NULL || !PyBytes_Check(parent) || PyBytes_GET_SIZE(parent) < 8 * slots) {
                PyErr_SetString(PyExc_TypeError, "expand_run(): a read set is a ReadSet, or None");
                failed = 1;
                break;
            }
            before = PyBytes_AS_STRING(parent);
            changed = PyLong_AsUnsignedLongLongMask(PyTuple_GET_ITEM(read_set, 1));
            if (changed == (uint64_t)-1 && PyErr_Occurred()) {
                failed = 1;
                break;
            }
        }
        if (within != Py_None) {
            PyObject *inside = PyObject_CallOneArg(within, state);
            int is = inside == NULL ? -1 : PyObject_IsTrue(inside);
            Py_XDECREF(inside);
            if (is < 0) {
                failed = 1; /* (nothing to undo) */
                break;
            }
            if (!is) {
                uint32_t none = 0;
                unsigned char not_stuck = 0;
                if (append_bytes(counts, &none, 4) < 0) {
                    failed = 1;
                    break;
                }
                if (append_bytes(stuck, &not_stuck, 1) < 0) {
                    cut_bytes(counts, PyByteArray_GET_SIZE(counts) - 4);
                    failed = 1;
                    break;
                }
                continue;
            }
        }
        PyObject *enabled;
        if (read_sets != Py_None) {
            memset(masks, 0, 8 * slots);
            PyTypeObject *watched = TRACKED;
            TRACKED = Py_TYPE(state);
            enabled = successors_loop(c, state, successors, actions, Py_None, before, changed,
                                      masks, slots);
            TRACKED = watched;
        } else {
            enabled = successors_loop(c, state, successors, actions, Py_None, NULL, 0, NULL, 0);
        }
        if (enabled == NULL)
            goto failed;
        int any = enabled == Py_True;
        Py_DECREF(enabled);
        if (!any && terminals) /* an intended final state? Model.final, in the caller */
            goto general;
        if (broken != Py_None) { /* a step that breaks a step check: the caller says which */
            int is = call_truth(broken, state, successors);
            if (is < 0)
                goto failed;
            if (is)
                goto general;
        }
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
        if (outside != Py_None) {
            int dropped = drop_outside(outside, candidates, views, positions, cand0);
            if (dropped < 0)
                goto failed;
            if (dropped > 0)
                goto general;
        }
        if (made != Py_None) {
            PyObject *kept = PyBytes_FromStringAndSize(masks, 8 * slots);
            PyObject *held = read_set != Py_None ? PyTuple_GET_ITEM(read_set, 2) : Py_None;
            int done = kept == NULL ? -1
                                    : append_read_sets(read_set_type, state, candidates, cand0,
                                                       kept, held, made);
            Py_XDECREF(kept);
            if (done < 0)
                goto failed;
        }
        Py_ssize_t fps0 = PyByteArray_GET_SIZE(fps);
        Py_ssize_t fresh = PyList_GET_SIZE(candidates) - cand0;
        if (PyByteArray_Resize(fps, fps0 + 8 * fresh) < 0 ||
            encode_into(module, candidates, cand0, fresh, fingerprint, encodings,
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
            failed = 1; /* (the state is counted: what the caller sees is consistent) */
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
            failed = 1;
            break;
        }
        PyErr_Clear(); /* the caller's general path raises it again, and says where */
        break;
    }
    PyMem_Free(masks);
    out_clear(&o);
    return failed ? NULL : PyLong_FromSsize_t(i);
}
