#include "hot.h"

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
            PyObject *bindings, PyObject *add, PyObject *kinds, PyObject *kind_error,
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
        add, ai, binding, state, result, states, actions, bindings, NULL);
    if (r == NULL)
        return -1;
    int enabled = PyObject_IsTrue(r);
    Py_DECREF(r);
    return enabled;
}

/* -- the expansion's context ------------------------------------------------------------
 *
 * What successors and expand_run need of a model, read by name from one Python object made
 * once per model and kind of batch (checker.model.expansion.Context, never changed once
 * made): the attributes of the last context met are kept here, with a reference to it (so
 * that its address is not reused), and read again only when another context comes. */

static PyObject *CONTEXT_OBJECT; /* the context whose attributes CONTEXT holds */
static Context CONTEXT;

#define CONTEXT_OBJECTS(X)                                                                    \
    X(plan) X(add) X(reraise) X(kinds) X(kind_error) X(read_set) X(fingerprint) X(bail)       \
    X(within) X(view) X(redo) X(identify) X(broken) X(outside)

static void
context_clear(Context *c)
{
#define CLEAR(name) Py_CLEAR(c->name);
    CONTEXT_OBJECTS(CLEAR)
#undef CLEAR
}

/* getattr(object, name), the name interned once in *cache. */
PyObject *
attribute(PyObject *object, const char *name, PyObject **cache)
{
    if (*cache == NULL && (*cache = PyUnicode_InternFromString(name)) == NULL)
        return NULL;
    return PyObject_GetAttr(object, *cache);
}

/* The context `object`'s attributes, copied to `out` (borrowed: the caller holds `object`,
 * which holds them); -1 on an error. */
int
context_of(PyObject *object, Context *out)
{
    if (object == CONTEXT_OBJECT) {
        *out = CONTEXT;
        return 0;
    }
    Context c = {0};
    PyObject *value;
#define GET(name)                                                                             \
    static PyObject *name##_name;                                                             \
    if ((c.name = attribute(object, #name, &name##_name)) == NULL)                            \
        goto error;
    CONTEXT_OBJECTS(GET)
#undef GET
    if (!PyTuple_CheckExact(c.plan) || (c.kinds != Py_None && !PyTuple_Check(c.kinds))) {
        PyErr_SetString(PyExc_TypeError, "the context's plan is a tuple, its kinds one or None");
        goto error;
    }
    if (c.identify == Py_None)
        Py_CLEAR(c.identify);
    static PyObject *constrained_name, *terminals_name, *slots_name;
    if ((value = attribute(object, "constrained", &constrained_name)) == NULL)
        goto error;
    c.constrained = PyObject_IsTrue(value);
    Py_DECREF(value);
    if ((value = attribute(object, "terminals", &terminals_name)) == NULL)
        goto error;
    c.terminals = PyObject_IsTrue(value);
    Py_DECREF(value);
    if ((value = attribute(object, "slots", &slots_name)) == NULL)
        goto error;
    c.slots = PyLong_AsSsize_t(value);
    Py_DECREF(value);
    if (c.constrained < 0 || c.terminals < 0 || (c.slots == -1 && PyErr_Occurred()))
        goto error;
    if (c.slots < 0)
        c.slots = 0;
    context_clear(&CONTEXT);
    CONTEXT = c;
    Py_INCREF(object);
    Py_XSETREF(CONTEXT_OBJECT, object);
    *out = c;
    return 0;
error:
    context_clear(&c);
    return -1;
}

PyObject *
successors_loop(const Context *c, PyObject *state, PyObject *states, PyObject *actions,
                PyObject *bindings_out, const char *before, uint64_t changed, char *out,
                Py_ssize_t slots)
{
    PyObject *plan = c->plan, *add = c->add, *reraise = c->reraise;
    int constrained = c->constrained;
    PyObject *kinds = c->kinds, *kind_error = c->kind_error;
    int recording = bindings_out != Py_None;
    if (!PyList_CheckExact(states) || !PyList_CheckExact(actions)) {
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
        PyObject **rows = NULL; /* (state_bindings': freed below) */
        Py_ssize_t rows_count = 0;
        if (fixed != Py_None) {
            bindings = fixed;
            Py_INCREF(bindings);
        } else if (arity == 1) { /* a one-parameter action's values in this state */
            bindings = domain_values(act, PyTuple_GET_ITEM(entry, 5), state);
            if (bindings == NULL)
                return NULL;
        } else if (PyTuple_CheckExact(PyTuple_GET_ITEM(entry, 5)) &&
                   PyTuple_GET_SIZE(PyTuple_GET_ITEM(entry, 5)) == arity) {
            /* the bindings in this state, built here: `rows` has `arity` values per binding,
             * `bindings` the domains that hold them */
            rows_count = state_bindings(act, PyTuple_GET_ITEM(entry, 5), state, &rows,
                                        &bindings);
            if (rows_count < 0)
                return NULL;
        } else { /* the bindings in this state, as the action gives them */
            PyObject *all = PyObject_CallMethodOneArg(act, STR_BINDINGS, state);
            if (all == NULL)
                return NULL;
            bindings = PySequence_Tuple(all);
            Py_DECREF(all);
            if (bindings == NULL)
                return NULL;
        }
        if (arity == 0) {
            Py_DECREF(bindings);
            if (out != NULL && still_disabled(before, changed, out, slot++))
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
                                bindings_out, add, kinds, kind_error, -1);
            Py_DECREF(result);
            Py_DECREF(none);
            if (r < 0)
                return NULL;
            enabled |= r;
            continue;
        }
        Py_ssize_t count = rows != NULL ? rows_count : PyTuple_GET_SIZE(bindings);
        /* (the bindings are the same in every state) */
        int slotted = out != NULL && fixed != Py_None;
        for (Py_ssize_t b = 0; b < count; b++) {
            if (slotted && still_disabled(before, changed, out, slot++))
                continue;
            /* the binding's values; the binding as a tuple, made only when needed (a
             * one-parameter action's values are bare, state_bindings' are rows) */
            PyObject *binding = NULL, *const *values;
            Py_ssize_t size;
            if (rows != NULL) {
                values = rows + b * arity;
                size = arity;
            } else if (arity == 1) {
                values = ((PyTupleObject *)bindings)->ob_item + b;
                size = 1;
            } else {
                binding = PyTuple_GET_ITEM(bindings, b);
                values = ((PyTupleObject *)binding)->ob_item;
                size = PyTuple_GET_SIZE(binding);
            }
            if (size > 12) {
                PyErr_SetString(PyExc_ValueError, "an action takes at most 12 parameters");
                goto failed;
            }
            PyObject *argv[16];
            argv[1] = self;
            argv[2] = state;
            for (Py_ssize_t p = 0; p < size; p++)
                argv[3 + p] = values[p];
            Py_ssize_t argc = 2 + size;
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
                made = PyTuple_New(size);
                if (made == NULL) {
                    Py_XDECREF(result);
                    goto failed;
                }
                for (Py_ssize_t p = 0; p < size; p++) {
                    Py_INCREF(values[p]);
                    PyTuple_SET_ITEM(made, p, values[p]);
                }
                binding = made;
            }
            if (result == NULL) {
                action_raised(reraise, ai, binding, state);
                Py_XDECREF(made);
                goto failed;
            }
            int r = take_result(result, ai, binding, state, shape, constrained, states, actions,
                                bindings_out, add, kinds, kind_error, fits);
            Py_DECREF(result);
            Py_XDECREF(made);
            if (r < 0)
                goto failed;
            enabled |= r;
        }
        PyMem_Free(rows);
        Py_DECREF(bindings);
        continue;
    failed:
        PyMem_Free(rows);
        Py_DECREF(bindings);
        return NULL;
    }
    if (out != NULL && slot != slots) {
        PyErr_SetString(PyExc_RuntimeError, "successors(): the plan's slots changed");
        return NULL;
    }
    return PyBool_FromLong(enabled);
}


/* successors(context, state, states, actions, bindings[, masks, changed, out]) -> enabled
 *
 * As Model.successors: `state`'s successors appended to the list `states`, their action indexes
 * to `actions`, their bindings to `bindings` (a list, or None), by the context's plan (see
 * Context). With `out` (a bytearray of 8 bytes per slot), the guards' reads are noted there
 * and `masks` (the parent's, bytes, or None) and `changed` (int) skip the bindings that are
 * still disabled (see still_disabled). */
PyObject *
hot_successors(PyObject *module, PyObject *const *args, Py_ssize_t nargs)
{
    if (nargs != 5 && nargs != 8) {
        PyErr_SetString(PyExc_TypeError, "successors() takes 5 or 8 arguments");
        return NULL;
    }
    Context context;
    if (context_of(args[0], &context) < 0)
        return NULL;
    const Context *c = &context;
    if (nargs == 5 || args[7] == Py_None)
        return successors_loop(c, args[1], args[2], args[3], args[4], NULL, 0, NULL, 0);
    PyObject *masks = args[5], *out = args[7];
    if (!PyByteArray_Check(out) || (masks != Py_None && (!PyBytes_Check(masks) ||
                                    PyBytes_GET_SIZE(masks) < PyByteArray_GET_SIZE(out)))) {
        PyErr_SetString(PyExc_TypeError, "successors(): masks are bytes, out a bytearray");
        return NULL;
    }
    uint64_t changed = PyLong_AsUnsignedLongLongMask(args[6]);
    if (changed == (uint64_t)-1 && PyErr_Occurred())
        return NULL;
    PyTypeObject *watched = TRACKED;
    TRACKED = Py_TYPE(args[1]);
    PyObject *r = successors_loop(c, args[1], args[2], args[3], args[4],
                                  masks == Py_None ? NULL : PyBytes_AS_STRING(masks), changed,
                                  PyByteArray_AS_STRING(out), PyByteArray_GET_SIZE(out) / 8);
    TRACKED = watched;
    return r;
}
