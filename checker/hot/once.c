/* once.c: OncePerState, a state predicate evaluated once per state. TLA+ specs define
 * `Inv == TypeOK /\ ...`: the engine evaluates TypeOK, then Inv calls it again on the same
 * state. The engine puts one of these in place of each state predicate it evaluates (its
 * invariants, terminals and reachables: checker.compiled), on the spec object, so that a
 * call from another predicate on the state just evaluated gives the result kept, with the
 * variables the first call read added to READS (hot.h), as if it had run again: incremental
 * evaluation sees the same reads. Its twin is checker.compiled.OncePerStatePython. */

#include "hot.h"

typedef struct {
    PyObject_HEAD
    vectorcallfunc vectorcall;
    PyObject *fn;     /* the predicate: a function of the state */
    PyObject *state;  /* the state last evaluated (kept: its identity is not reused), or NULL */
    PyObject *result; /* what fn returned on it */
    uint64_t reads;   /* the variables it read there */
    PyTypeObject *tracked; /* TRACKED then: a result kept untracked has no reads to give */
} Once;

static PyObject *
once_vectorcall(PyObject *self, PyObject *const *args, size_t nargsf, PyObject *kwnames)
{
    Once *once = (Once *)self;
    Py_ssize_t nargs = PyVectorcall_NARGS(nargsf);
    int one = nargs == 1 && kwnames == NULL;
    if (one && args[0] == once->state && TRACKED == once->tracked) {
        READS |= once->reads;
        return Py_NewRef(once->result);
    }
    uint64_t before = READS;
    READS = 0;
    PyObject *result = PyObject_Vectorcall(once->fn, args, nargsf, kwnames);
    uint64_t reads = READS;
    READS = before | reads;
    if (result != NULL && one) { /* (an error is not kept: a second call says it again) */
        Py_XSETREF(once->state, Py_NewRef(args[0]));
        Py_XSETREF(once->result, Py_NewRef(result));
        once->reads = reads;
        once->tracked = TRACKED;
    }
    return result;
}

static PyObject *
once_new(PyTypeObject *type, PyObject *args, PyObject *kwargs)
{
    PyObject *fn;
    if (!PyArg_ParseTuple(args, "O:OncePerState", &fn))
        return NULL;
    if (!PyCallable_Check(fn)) {
        PyErr_Format(PyExc_TypeError, "OncePerState(fn): fn is not callable: %R", fn);
        return NULL;
    }
    Once *once = (Once *)type->tp_alloc(type, 0);
    if (once == NULL)
        return NULL;
    once->vectorcall = once_vectorcall;
    once->fn = Py_NewRef(fn);
    return (PyObject *)once;
}

static int
once_traverse(Once *once, visitproc visit, void *arg)
{
    Py_VISIT(once->fn);
    Py_VISIT(once->state);
    Py_VISIT(once->result);
    return 0;
}

static int
once_clear(Once *once)
{
    Py_CLEAR(once->fn);
    Py_CLEAR(once->state);
    Py_CLEAR(once->result);
    return 0;
}

static void
once_dealloc(Once *once)
{
    PyObject_GC_UnTrack(once);
    once_clear(once);
    Py_TYPE(once)->tp_free((PyObject *)once);
}

/* What it does not have itself (a name, a doc, __self__) is the predicate's. */
static PyObject *
once_getattro(PyObject *self, PyObject *name)
{
    PyObject *found = PyObject_GenericGetAttr(self, name);
    if (found != NULL || !PyErr_ExceptionMatches(PyExc_AttributeError))
        return found;
    PyErr_Clear();
    return PyObject_GetAttr(((Once *)self)->fn, name);
}

/* Pickled (a model shipped to Spark executors) as a new one of the same predicate. */
static PyObject *
once_reduce(PyObject *self, PyObject *unused)
{
    return Py_BuildValue("O(O)", (PyObject *)Py_TYPE(self), ((Once *)self)->fn);
}

static PyObject *
once_forget(PyObject *self, PyObject *unused)
{
    Once *once = (Once *)self;
    Py_CLEAR(once->state);
    Py_CLEAR(once->result);
    Py_RETURN_NONE;
}

static PyMethodDef once_methods[] = {
    {"__reduce__", once_reduce, METH_NOARGS, NULL},
    {"forget", once_forget, METH_NOARGS, "Drop the state and result kept."},
    {NULL},
};

static PyMemberDef once_members[] = {
    {"__wrapped__", T_OBJECT, offsetof(Once, fn), READONLY, "the predicate"},
    {NULL},
};

PyTypeObject OnceType = {
    PyVarObject_HEAD_INIT(NULL, 0)
    .tp_name = "checker._hot.OncePerState",
    .tp_basicsize = sizeof(Once),
    .tp_flags = Py_TPFLAGS_DEFAULT | Py_TPFLAGS_HAVE_GC | Py_TPFLAGS_HAVE_VECTORCALL,
    .tp_doc = "OncePerState(fn): fn(state), evaluated once for the state last given.",
    .tp_new = once_new,
    .tp_dealloc = (destructor)once_dealloc,
    .tp_traverse = (traverseproc)once_traverse,
    .tp_clear = (inquiry)once_clear,
    .tp_vectorcall_offset = offsetof(Once, vectorcall),
    .tp_call = PyVectorcall_Call,
    .tp_getattro = once_getattro,
    .tp_methods = once_methods,
    .tp_members = once_members,
};
