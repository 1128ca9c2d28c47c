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

/* A parameter's domain in `state`, in canonical order, as Action.ordered gives it (a new
 * reference): `found`, what the spec's domain gave (a reference stolen). A tuple is its own
 * order and a list its items' (up to checker.compiled.MAX_DOMAIN values), a set of at most one
 * value needs no order, a set of ints or of strings is sorted here; any other frozenset's order
 * is computed once per set object (the same message set is the domain in many states: the set
 * is held while cached, so its address is not reused); anything else, or a set not cached,
 * goes to Action.ordered (with the parameter's index and the earlier values its domain took,
 * `earlier`, when not the first parameter). */
#define MAX_DOMAIN 1000000
#define ORDER_SLOTS 512
typedef struct {
    PyObject *set;
    PyObject *order;
} OrderSlot;
static OrderSlot *ORDERS;

/* Action.<name>(state, what) for the first parameter of a one-parameter action (`index` < 0),
 * else Action.<name>(state, what, index, earlier): `earlier` the `takes` values of the earlier
 * parameters its domain took. */
static PyObject *
ask_action(PyObject *act, PyObject *name, PyObject *state, PyObject *what, Py_ssize_t index,
           PyObject *const *earlier, Py_ssize_t takes)
{
    if (index < 0)
        return PyObject_CallMethodObjArgs(act, name, state, what, NULL);
    PyObject *at = PyLong_FromSsize_t(index), *given = PyTuple_New(takes), *r = NULL;
    if (at != NULL && given != NULL) {
        for (Py_ssize_t d = 0; d < takes; d++) {
            Py_INCREF(earlier[d]);
            PyTuple_SET_ITEM(given, d, earlier[d]);
        }
        r = PyObject_CallMethodObjArgs(act, name, state, what, at, given, NULL);
    }
    Py_XDECREF(at);
    Py_XDECREF(given);
    return r;
}

/* A set of ints (and bools) alone, or of strings alone, in canonical order (their natural
 * order, as checker.values.encoding.canonical_order puts them) as a tuple; None for a set of
 * other values (NULL: an error). */
static PyObject *
sorted_plain(PyObject *set)
{
    PyObject *list = PySequence_List(set);
    if (list == NULL)
        return NULL;
    Py_ssize_t n = PyList_GET_SIZE(list);
    int ints = 1, strs = 1;
    for (Py_ssize_t i = 0; i < n && (ints || strs); i++) {
        PyTypeObject *type = Py_TYPE(PyList_GET_ITEM(list, i));
        ints &= type == &PyLong_Type || type == &PyBool_Type;
        strs &= type == &PyUnicode_Type;
    }
    if (!ints && !strs) {
        Py_DECREF(list);
        Py_RETURN_NONE;
    }
    if (PyList_Sort(list) < 0) {
        Py_DECREF(list);
        return NULL;
    }
    PyObject *order = PyList_AsTuple(list);
    Py_DECREF(list);
    return order;
}

static PyObject *
in_order(PyObject *act, PyObject *domain, PyObject *state, Py_ssize_t index,
         PyObject *const *earlier, Py_ssize_t takes)
{
    if (PyTuple_CheckExact(domain) && PyTuple_GET_SIZE(domain) <= MAX_DOMAIN)
        return domain;
    if (PyList_CheckExact(domain) && PyList_GET_SIZE(domain) <= MAX_DOMAIN) {
        PyObject *order = PyList_AsTuple(domain);
        Py_DECREF(domain);
        return order;
    }
    if (PyAnySet_CheckExact(domain) && PySet_GET_SIZE(domain) <= 1) {
        PyObject *order = PySequence_Tuple(domain);
        Py_DECREF(domain);
        return order;
    }
    OrderSlot *slot = NULL;
    if (PyFrozenSet_CheckExact(domain)) {
        if (ORDERS == NULL && (ORDERS = PyMem_Calloc(ORDER_SLOTS, sizeof(OrderSlot))) == NULL) {
            Py_DECREF(domain);
            return PyErr_NoMemory();
        }
        slot = &ORDERS[((uintptr_t)domain >> 4) & (ORDER_SLOTS - 1)];
        if (slot->set == domain) {
            Py_DECREF(domain);
            Py_INCREF(slot->order);
            return slot->order;
        }
    }
    PyObject *order = NULL;
    if (PyAnySet_CheckExact(domain)) { /* (ints or strings: sorted here) */
        order = sorted_plain(domain);
        if (order == NULL) {
            Py_DECREF(domain);
            return NULL;
        }
        if (order == Py_None)
            Py_CLEAR(order);
        else
            slot = NULL; /* (cheap to sort again: kept for sets that are not) */
    }
    if (order == NULL)
        order = ask_action(act, STR_ORDERED, state, domain, index, earlier, takes);
    if (order != NULL && !PyTuple_CheckExact(order)) {
        Py_SETREF(order, NULL);
        PyErr_SetString(PyExc_SystemError, "Action.ordered returned no tuple");
    }
    if (order != NULL && slot != NULL) {
        Py_XSETREF(slot->set, domain); /* (the reference taken by the call) */
        Py_INCREF(order);
        Py_XSETREF(slot->order, order);
        return order;
    }
    Py_DECREF(domain);
    return order;
}

/* A domain raised: let Action.domain_failed raise the error naming the action, the parameter
 * and the state (or let an interrupt go on); `index` and `earlier` as ask_action's. Returns
 * NULL. */
static PyObject *
domain_raised(PyObject *act, PyObject *state, Py_ssize_t index, PyObject *const *earlier,
              Py_ssize_t takes)
{
    PyObject *type, *value, *traceback;
    PyErr_Fetch(&type, &value, &traceback);
    PyErr_NormalizeException(&type, &value, &traceback);
    if (traceback != NULL)
        PyException_SetTraceback(value, traceback);
    PyObject *returned = ask_action(act, STR_DOMAIN_FAILED, state, value, index, earlier, takes);
    Py_XDECREF(type);
    Py_XDECREF(value);
    Py_XDECREF(traceback);
    if (returned != NULL) { /* (it always raises) */
        Py_DECREF(returned);
        PyErr_SetString(PyExc_SystemError, "Action.domain_failed returned");
    }
    return NULL;
}

/* A one-parameter action's values in `state`, as Action.values gives them: `domain(state)` in
 * canonical order (see in_order). What the domain raises goes to Action.domain_failed. */
static PyObject *
domain_values(PyObject *act, PyObject *domain_of, PyObject *state)
{
    PyObject *domain = PyObject_CallOneArg(domain_of, state);
    if (domain == NULL)
        return domain_raised(act, state, -1, NULL, 0);
    return in_order(act, domain, state, -1, NULL, 0);
}

/* The bindings of an action of several parameters in `state`, as Action.bindings gives them
 * (checker.compiled), without a tuple per binding: `rows` (set here, PyMem) gets `width`
 * values per binding, borrowed from the domains' tuples, which `held` (a list, set here)
 * keeps. `domains` has per parameter (values, depends): a tuple of values, or the spec's
 * domain function and the indexes of the earlier parameters it takes after the state (empty:
 * a function of the state alone, called once). The product, the first parameter varying
 * slowest, built one parameter after another: a function of earlier parameters is called once
 * per binding of those before it, in order. Returns the number of bindings, or -1 (an error:
 * a domain's, raised by Action.domain_failed; nothing to free). */
static Py_ssize_t
state_bindings(PyObject *act, PyObject *domains, PyObject *state, PyObject ***rows_out,
               PyObject **held_out)
{
    Py_ssize_t width = PyTuple_GET_SIZE(domains);
    PyObject *held = PyList_New(0);
    PyObject **rows = PyMem_Malloc(sizeof(PyObject *) * (width ? width : 1));
    Py_ssize_t n = 1;
    if (held == NULL || rows == NULL)
        goto no_memory;
    for (Py_ssize_t j = 0; j < width; j++) {
        PyObject *spec = PyTuple_GET_ITEM(domains, j);
        if (!PyTuple_CheckExact(spec) || PyTuple_GET_SIZE(spec) != 2) {
            PyErr_SetString(PyExc_TypeError, "a plan's domains are (values, depends) pairs");
            goto error;
        }
        PyObject *domain = PyTuple_GET_ITEM(spec, 0), *depends = PyTuple_GET_ITEM(spec, 1);
        int dependent = PyTuple_CheckExact(depends) && PyTuple_GET_SIZE(depends) > 0;
        PyObject *values = NULL; /* the domain of every binding so far (not dependent) */
        if (PyTuple_CheckExact(domain)) {
            values = domain;
            Py_INCREF(values);
        } else if (!dependent) {
            PyObject *found = PyObject_CallOneArg(domain, state);
            values = found == NULL ? domain_raised(act, state, j, NULL, 0)
                                   : in_order(act, found, state, j, NULL, 0);
            if (values == NULL)
                goto error;
        }
        if (values != NULL) {
            int kept = PyList_Append(held, values);
            Py_ssize_t size = PyTuple_GET_SIZE(values);
            Py_DECREF(values); /* (the list holds it) */
            if (kept < 0)
                goto error;
            if (size != 0 && n > PY_SSIZE_T_MAX / (Py_ssize_t)sizeof(PyObject *) / width / size)
                goto no_memory;
            PyObject **grown = PyMem_Malloc(sizeof(PyObject *) * (n * size * width + 1));
            if (grown == NULL)
                goto no_memory;
            Py_ssize_t r2 = 0;
            for (Py_ssize_t r = 0; r < n; r++)
                for (Py_ssize_t v = 0; v < size; v++, r2++) {
                    memcpy(grown + r2 * width, rows + r * width, sizeof(PyObject *) * j);
                    grown[r2 * width + j] = PyTuple_GET_ITEM(values, v);
                }
            PyMem_Free(rows);
            rows = grown;
            n = r2;
            continue;
        }
        /* for each binding so far, its own domain: domain(state, *its earlier values) */
        Py_ssize_t takes = PyTuple_GET_SIZE(depends);
        if (takes > 12) {
            PyErr_SetString(PyExc_ValueError, "a domain takes at most 12 earlier parameters");
            goto error;
        }
        Py_ssize_t start = PyList_GET_SIZE(held), total = 0;
        for (Py_ssize_t r = 0; r < n; r++) {
            PyObject *argv[14];
            argv[1] = state;
            for (Py_ssize_t d = 0; d < takes; d++) {
                Py_ssize_t at = PyLong_AsSsize_t(PyTuple_GET_ITEM(depends, d));
                if (at < 0 || at >= j) {
                    if (!PyErr_Occurred())
                        PyErr_SetString(PyExc_ValueError, "a domain depends on a later parameter");
                    goto error;
                }
                argv[2 + d] = rows[r * width + at];
            }
            PyObject *found = PyObject_Vectorcall(
                domain, argv + 1, (takes + 1) | PY_VECTORCALL_ARGUMENTS_OFFSET, NULL);
            PyObject *mine = found == NULL ? domain_raised(act, state, j, argv + 2, takes)
                                           : in_order(act, found, state, j, argv + 2, takes);
            if (mine == NULL)
                goto error;
            int kept = PyList_Append(held, mine);
            total += PyTuple_GET_SIZE(mine);
            Py_DECREF(mine);
            if (kept < 0)
                goto error;
        }
        if (total > PY_SSIZE_T_MAX / (Py_ssize_t)sizeof(PyObject *) / width)
            goto no_memory;
        PyObject **grown = PyMem_Malloc(sizeof(PyObject *) * (total * width + 1));
        if (grown == NULL)
            goto no_memory;
        Py_ssize_t r2 = 0;
        for (Py_ssize_t r = 0; r < n; r++) {
            PyObject *mine = PyList_GET_ITEM(held, start + r);
            for (Py_ssize_t v = 0; v < PyTuple_GET_SIZE(mine); v++, r2++) {
                memcpy(grown + r2 * width, rows + r * width, sizeof(PyObject *) * j);
                grown[r2 * width + j] = PyTuple_GET_ITEM(mine, v);
            }
        }
        PyMem_Free(rows);
        rows = grown;
        n = r2;
    }
    *rows_out = rows;
    *held_out = held;
    return n;
no_memory:
    PyErr_NoMemory();
error:
    PyMem_Free(rows);
    Py_XDECREF(held);
    return -1;
}

/* -- the expansion's context ------------------------------------------------------------
 *
 * What successors and expand_run need of a model, read by name from one Python object made
 * once per model and kind of batch (checker.model.expansion.Context, never changed once
 * made): the attributes of the last context met are kept here, with a reference to it (so
 * that its address is not reused), and read again only when another context comes. */
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
static PyObject *
attribute(PyObject *object, const char *name, PyObject **cache)
{
    if (*cache == NULL && (*cache = PyUnicode_InternFromString(name)) == NULL)
        return NULL;
    return PyObject_GetAttr(object, *cache);
}

/* The context `object`'s attributes, copied to `out` (borrowed: the caller holds `object`,
 * which holds them); -1 on an error. */
static int
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

static PyObject *
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

/* Empty the cache of domains' orders (forget_encodings). */
void
forget_orders(void)
{
    if (ORDERS != NULL) {
        for (Py_ssize_t i = 0; i < ORDER_SLOTS; i++) {
            Py_CLEAR(ORDERS[i].set);
            Py_CLEAR(ORDERS[i].order);
        }
    }
}
