#include "hot.h"

/* -- domains: an action's bindings in a state (checker.compiled.Action.bindings) ------------ */

/* A parameter's domain in `state`, in canonical order, as Action.ordered gives it (a new
 * reference): `found`, what the spec's domain gave (a reference stolen). A tuple is its own
 * order and a list its items' (up to checker.compiled.MAX_DOMAIN values), a set of at most one
 * value needs no order, a set of ints or of strings is sorted here, any other set by its
 * values' encodings, a frozenset's order computed once per set object (the same message set
 * is the domain in many states: the set is held while cached, so its address is not reused);
 * anything else, or a set with a value that cannot be encoded, goes to Action.ordered (with the parameter's index and the earlier values its domain took,
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

/* A set of other values in canonical order (the order of their encodings, as
 * checker.values.encoding.canonical_order puts them) as a tuple; None when one cannot be
 * encoded (Action.ordered says why), NULL on another error. */
static PyObject *
sorted_encoded(PyObject *set)
{
    PyObject *list = PySequence_List(set);
    if (list == NULL)
        return NULL;
    Py_ssize_t n = PyList_GET_SIZE(list);
    for (Py_ssize_t i = 0; i < n; i++) { /* each value as (its encoding, it) */
        PyObject *value = PyList_GET_ITEM(list, i);
        PyObject *data = hot_encode(NULL, value);
        if (data == NULL) {
            Py_DECREF(list);
            if (!PyErr_ExceptionMatches(PyExc_Exception))
                return NULL;
            PyErr_Clear();
            Py_RETURN_NONE;
        }
        PyObject *pair = PyTuple_Pack(2, data, value);
        Py_DECREF(data);
        if (pair == NULL) {
            Py_DECREF(list);
            return NULL;
        }
        PyList_SET_ITEM(list, i, pair); /* (the list's reference to value: the pair's now) */
        Py_DECREF(value);
    }
    /* (distinct values have distinct encodings: the values themselves are never compared) */
    if (PyList_Sort(list) < 0) {
        Py_DECREF(list);
        return NULL;
    }
    PyObject *order = PyTuple_New(n);
    if (order != NULL)
        for (Py_ssize_t i = 0; i < n; i++) {
            PyObject *value = PyTuple_GET_ITEM(PyList_GET_ITEM(list, i), 1);
            Py_INCREF(value);
            PyTuple_SET_ITEM(order, i, value);
        }
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
        if (order == Py_None) { /* any other values: by their encodings */
            Py_SETREF(order, sorted_encoded(domain));
            if (order == Py_None)
                Py_CLEAR(order); /* (Action.ordered says why) */
            else if (order == NULL) {
                Py_DECREF(domain);
                return NULL;
            }
        } else if (order == NULL) {
            Py_DECREF(domain);
            return NULL;
        } else
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
PyObject *
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
Py_ssize_t
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
