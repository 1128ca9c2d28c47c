"""The compiled spec at work: the two functions every engine uses, `expand` (a state's
successors, the initial states' too) and `fingerprint_of` (what identifies a state: its view,
up to symmetry), and the checks of a state (invariants, reachability, final states)."""

from __future__ import annotations

import difflib
import inspect
from collections.abc import Callable, Iterable, Sequence
from typing import Any, NamedTuple

from checker import kinds
from checker.compiled import Binding, CompiledSpec, Invariant
from checker.encoding import decode, encode, encode_state, fingerprint
from checker.errors import EvaluationError, Interrupted, SpecError
from checker.record import Map, Record, StateError, freeze
from checker.result import CheckResult, Step
from checker.spec import Spec
from checker.speedups import hot
from checker.symmetry import Permutation
from checker.values import show

_conforms = kinds.conforms if hot is None else hot.conforms
_REDUCED_CACHE = 1 << 18  # entries (about 25 MB) of Model.fingerprint_of's cache, per process
ROOT = -1  # the action index of an initial state's link; its binding index is its init index


class Successor(NamedTuple):  # a tuple: one is built per generated state
    action: int  # index into Model.actions
    binding: int  # index into the action's bindings in the parent state
    state: Record
    data: bytes  # canonical encoding
    fp: int  # Model.fingerprint_of the state


class Successors(list):  # type: ignore[type-arg]
    """`Model.expand`'s successors, in order. `deadlocked`: no action is enabled in the state.
    A state outside the state constraints is not expanded (no successors, not deadlocked);
    one whose every successor an action constraint discards is not deadlocked either (as in
    TLC: constraints bound the search, they do not make deadlocks)."""

    __slots__ = ("deadlocked",)

    def __init__(self, successors: Iterable[Successor] = (), deadlocked: bool = False) -> None:
        super().__init__(successors)
        self.deadlocked = deadlocked


class Model(CompiledSpec):
    """The engines' view of a spec: no Kafka, no printing, just states and transitions."""

    def __init__(
        self,
        spec: Spec,
        path: str = "",
        invariants: Sequence[str] | None = None,
        symmetry: bool = True,
    ):
        """`symmetry=False` ignores the symmetry the spec declares (`mc check --no-symmetry`)."""
        super().__init__(spec, path, invariants, symmetry)
        self._reduced_fps: dict[int, int] = {}  # concrete fingerprint -> fingerprint_of
        # The states' kind (checker.kinds), from the initial states and the declared types:
        # known once the initial states are.
        self._kinds: kinds.Kind | None = None
        self._initial: list[Record] | None = None

    @property
    def kinds(self) -> kinds.Kind:
        """The kind of the states (a RECORD kind: each variable's kind), from the initial
        states and the spec's `types`."""
        if self._kinds is None:
            self.initial_states()
        assert self._kinds is not None
        return self._kinds

    def __getstate__(self) -> dict[str, Any]:
        """A copy sent to Spark executors travels without the driver's fingerprint cache."""
        # Nor with the states' kind, which names the shapes (classes) of this process: an
        # executor infers it again, from its own initial states.
        return {**self.__dict__, "_reduced_fps": {}, "_kinds": None, "_initial": None}

    # -- states ----------------------------------------------------------------------------

    def initial_states(self) -> list[Record]:
        if self._initial is not None:
            return list(self._initial)
        try:
            result = self.spec.init()
        except NotImplementedError:
            raise SpecError(f"{self.name} has no initial state: define init(self)") from None
        except Interrupted:
            raise
        except BaseException as exc:
            raise EvaluationError("init", "init", _raised(exc), cause=exc) from exc
        states = [result] if isinstance(result, Record) else _as_list(result)
        if states is None or not all(isinstance(s, Record) for s in states):
            raise EvaluationError(
                "init", "init", f"must return a Record or a list of Records, not {result!r}"
            )
        if not states:
            raise SpecError(f"{self.name}.init() returned no initial state")
        if any(isinstance(s, Map) for s in states):
            raise EvaluationError(
                "init", "init", "a state's variables must be names (identifiers), not map keys"
            )
        for other in states[1:]:
            if other.keys() != states[0].keys():
                differ = _variables_differ(other, states[0])
                message = f"returned initial states with different variables: one {differ}"
                raise EvaluationError("init", "init", message)
        unknown = [n for n in self._declared if n not in states[0]]
        if unknown:
            names = [str(k) for k in states[0]]
            close = difflib.get_close_matches(unknown[0], names, n=1)
            hint = f"; did you mean {close[0]!r}?" if close else ""
            raise SpecError(
                f"{self.path or self.name}: {self.name} declares the type of {unknown[0]!r},"
                f" which is not a variable of its states (variables: {', '.join(names)}){hint}"
            )
        kind, why = kinds.state_kind(states, self._declared)
        if kind is None:
            raise EvaluationError("init", "init", f"returned states that mc cannot type: {why}")
        self._kinds = kind
        self._initial = states
        return list(states)

    def initial(self) -> list[Successor]:
        """The initial states, encoded and fingerprinted (action ROOT, binding = init index)."""
        out = []
        for index, state in enumerate(self.initial_states()):
            data = _encoded(state, "init", "init", state=None, params={})
            out.append(Successor(ROOT, index, state, data, self.fingerprint_of(state, data)))
        return out

    def fingerprint_of(self, state: Record, data: bytes | None = None) -> int:
        """What identifies `state` in the search (`data`: its encoding, if known): the
        fingerprint of its encoding, or of its view's; with symmetry, of the smallest of
        those over every renaming of the symmetric values."""
        if data is None:
            data = encode(state)
        raw = fingerprint(data)
        if not self.reduces:
            return raw
        fp = self._reduced_fps.get(raw)
        return self._reduce(state, data, raw) if fp is None else fp

    def _reduce(self, state: Record, data: bytes, raw: int) -> int:
        """`fingerprint_of` a state with a view or a symmetry, which costs a view and a
        renaming per permutation: the result is remembered for the state, and (without a
        view) for its renamings, which are the same state to the search. Most states
        generated were generated before, or are renamings of one that was."""
        if self.symmetry is None:
            best = self._encoded_view(state)
            renamed: list[bytes] = []
        else:
            best, renamed = self._representative(state, data)
        fp = fingerprint(best)
        cache = self._reduced_fps
        if len(cache) + len(renamed) >= _REDUCED_CACHE:
            cache.clear()
        cache[raw] = fp
        for other in renamed:
            cache[fingerprint(other)] = fp
        return fp

    def _representative(self, state: Record, data: bytes) -> tuple[bytes, list[bytes]]:
        """The smallest encoding (of the view, if any) of the candidate images of `state`
        (checker.symmetry), and the encodings of those images (without a view)."""
        assert self.symmetry is not None
        best = None
        renamed = []
        for p in self.symmetry.candidates(state):
            image = self._permuted(state, p)
            if self.view is None:
                other = _encoded(image, "permute", "permute", state=state, params={})
                renamed.append(other)
            else:
                other = self._encoded_view(image)
            if best is None or other < best:
                best = other
        assert best is not None
        return best, renamed

    def _encoded_view(self, state: Record) -> bytes:
        assert self.view is not None
        try:
            view = freeze(self.view(state))
        except StateError as exc:
            raise EvaluationError(
                "view", "view", f"returned a value that cannot be encoded: {exc}", state=state
            ) from exc
        except Interrupted:
            raise
        except BaseException as exc:
            raise EvaluationError("view", "view", _raised(exc), state=state, cause=exc) from exc
        return _encoded(view, "view", "view", state=state, params={})

    def _permuted(self, state: Record, p: Permutation) -> Record:
        assert self.symmetry is not None
        try:
            image = self.symmetry.permute(state, p)
        except Interrupted:
            raise
        except BaseException as exc:
            raise EvaluationError(
                "permute", "permute", f"{_raised(exc)} (renaming {p})", state=state, cause=exc
            ) from exc
        if not isinstance(image, Record) or image.keys() != state.keys():
            what = (
                f"a state {_variables_differ(image, state)}"
                if isinstance(image, Record)
                else repr(image)
            )
            raise EvaluationError(
                "permute",
                "permute",
                f"returned {what}; it must return the state with the same variables",
                state=state,
            )
        return image

    def within_constraints(self, state: Record) -> bool:
        """Whether `state` satisfies every state constraint (else it is not expanded)."""
        return all(_holds("constraint", c.name, c.fn, state) for c in self.constraints)

    def _allowed(self, ai: int, binding: Binding, state: Record, succ: Record) -> bool:
        """Whether every action constraint allows the step from `state` to `succ`."""
        params = self.actions[ai].describe(binding)
        return all(
            _holds("action constraint", c.name, c.fn, state, succ, params=params)
            for c in self.action_constraints
        )

    def fire(self, ai: int, binding: Binding, state: Record) -> list[Record]:
        """The successors of `state` under action `ai` with parameters `binding`, as `expand`
        gives them: none outside the state constraints, none an action constraint discards."""
        if self.constraints and not self.within_constraints(state):
            return []
        act = self.actions[ai]
        try:
            result = act.fn(state, *binding)
        except Interrupted:
            raise
        except BaseException as exc:
            raise self._raised_in(ai, binding, state, exc) from exc
        successors = self._successors(ai, binding, state, result)
        if self.action_constraints:
            successors = [t for t in successors if self._allowed(ai, binding, state, t)]
        return successors

    def _raised_in(
        self, ai: int, binding: Binding, state: Record, exc: BaseException
    ) -> BaseException:
        act = self.actions[ai]
        return EvaluationError(
            "action", act.name, _raised(exc), state=state, params=act.describe(binding), cause=exc
        )

    def _successors(self, ai: int, binding: Binding, state: Record, result: Any) -> list[Record]:
        """An action's return value as a list of checked successor states."""
        if result is None:
            return []
        many = [result] if isinstance(result, Record) else _as_list(result)
        for succ in many if many is not None else (result,):
            if not isinstance(succ, Record):
                message = (
                    f"returned {result!r}; an action returns None, a Record or a list of Records"
                )
            elif succ.keys() != state.keys():
                message = f"returned a state {_variables_differ(succ, state)}"
            else:
                if not _conforms(succ, state, self.kinds):
                    self._kind_error(ai, binding, state, succ)
                continue
            act = self.actions[ai]
            raise EvaluationError(
                "action", act.name, message, state=state, params=act.describe(binding)
            )
        return many  # type: ignore[return-value]

    def successors(
        self,
        state: Record,
        states: list[Record],
        actions: Any,
        bindings: list[Binding] | None = None,
    ) -> bool:
        """The engines' shared step: append every successor of `state` to `states`, in the
        fixed order (actions as declared, then parameter bindings, then the action's own
        order), its action index to `actions` and, if given, its binding to `bindings`; none
        that an action constraint discards. Returns whether any action was enabled (the state
        constraints are the caller's to check). This is the hot loop of every engine: one call
        per action and binding, and the common case (an action returning one Record with the
        state's variables) takes the short path. With the C hot path (checker._hot) the same
        loop runs in C (`states` and `actions` must then be lists)."""
        state_kind = self._kinds if self._kinds is not None else self.kinds
        if hot is not None:
            return hot.successors(
                self._plan,
                state,
                states,
                actions,
                bindings,
                self._add,
                self._reraise,
                self._constrained,
                state_kind,
                self._kind_error,
            )
        shape = state.__class__
        add, mark = states.append, actions.append
        conforms = kinds.successor_conforms
        enabled = False
        for ai, fn, arity, static, act in self._plan:
            if arity == 0:
                try:
                    result = fn(state)
                except Interrupted:
                    raise
                except BaseException as exc:
                    raise self._raised_in(ai, (), state, exc) from exc
                if result is None:
                    continue
                if result.__class__ is shape and not self.action_constraints:
                    if not conforms(result, state, state_kind):
                        self._kind_error(ai, (), state, result)
                    add(result)
                    mark(ai)
                    if bindings is not None:
                        bindings.append(())
                    enabled = True
                elif self._add(ai, (), state, result, states, actions, bindings):
                    enabled = True
            elif arity == 1:
                values = static if static is not None else act.values(state)
                for value in values:
                    try:
                        result = fn(state, value)
                    except Interrupted:
                        raise
                    except BaseException as exc:
                        raise self._raised_in(ai, (value,), state, exc) from exc
                    if result is None:
                        continue
                    if result.__class__ is shape and not self.action_constraints:
                        if not conforms(result, state, state_kind):
                            self._kind_error(ai, (value,), state, result)
                        add(result)
                        mark(ai)
                        if bindings is not None:
                            bindings.append((value,))
                        enabled = True
                    elif self._add(ai, (value,), state, result, states, actions, bindings):
                        enabled = True
            else:
                for binding in static if static is not None else act.bindings(state):
                    try:
                        result = fn(state, *binding)
                    except Interrupted:
                        raise
                    except BaseException as exc:
                        raise self._raised_in(ai, binding, state, exc) from exc
                    if result is None:
                        continue
                    if self._add(ai, binding, state, result, states, actions, bindings):
                        enabled = True
        return enabled

    def _add(
        self,
        ai: int,
        binding: Binding,
        state: Record,
        result: Any,
        states: list[Record],
        actions: Any,
        bindings: list[Binding] | None,
    ) -> bool:
        """The general case of `successors`: a list of successors, action constraints, or a
        result to check. Returns whether the action was enabled."""
        many = self._successors(ai, binding, state, result)
        for succ in many:
            if self.action_constraints and not self._allowed(ai, binding, state, succ):
                continue
            states.append(succ)
            actions.append(ai)
            if bindings is not None:
                bindings.append(binding)
        return bool(many)

    def _kind_error(self, ai: int, binding: Binding, state: Record, succ: Record) -> None:
        """A successor whose variables are not all of their kinds: raise the error that says
        which variable, both kinds and the action; unless it was only a list or set inside a
        tuple, which the engine freezes (as put() would) before it encodes the state."""
        act = self.actions[ai]
        params = act.describe(binding)
        try:
            frozen = type(succ)((type(succ), *[freeze(v) for v in succ.values()]))
        except StateError as exc:
            raise _unencodable(exc, "action", act.name, state, params) from exc
        state_kind = self.kinds
        if _conforms(frozen, state, state_kind):
            return
        for index, (name, value) in enumerate(frozen.items(), start=1):
            found = kinds.mismatch(value, state_kind.b[index], str(name))
            if found is None:
                continue
            path, expected, part, optional = found
            origin = "as declared" if name in self._declared else "in the initial states"
            message = (
                f"changed the kind of {path}: {kinds.describe(expected)} {origin},"
                f" {kinds.found_kind(part)} in the state it built ({path} = {show(part)})"
            )
            if part is None:
                message += (
                    f"; if {name} may hold None there, declare it in the spec class:"
                    f" {name}: {kinds.python_type(optional)}"
                )
            raise EvaluationError("action", act.name, message, state=state, params=params)
        raise AssertionError("a successor failed its kind check, and no variable does")

    def _reraise(self, ai: int, binding: Binding, state: Record, exc: BaseException) -> None:
        """Raise what an action raised as the EvaluationError that says where (for C, which
        passes every exception here); an interrupt goes on as it was."""
        if isinstance(exc, Interrupted):
            raise exc
        raise self._raised_in(ai, binding, state, exc) from exc

    def expand(self, data: bytes) -> Successors:
        """The successors of an encoded state, as `successors` gives them, each encoded and
        fingerprinted (a successor's binding is its index in the action's bindings); none if
        the state is outside the state constraints."""
        state = decode(data)
        out = Successors()
        if self.constraints and not self.within_constraints(state):
            return out
        states: list[Record] = []
        actions: list[int] = []
        bindings: list[Binding] = []
        enabled = self.successors(state, states, actions, bindings)
        out.deadlocked = not enabled and not self.final(state)
        domains: dict[int, Sequence[Binding]] = {}
        for succ, ai, binding in zip(states, actions, bindings):
            act = self.actions[ai]
            try:
                encoded = encode_state(succ)
            except StateError as exc:
                raise _unencodable(exc, "action", act.name, state, act.describe(binding)) from exc
            if not self.reduces:
                fp = fingerprint(encoded)
            else:
                fp = self._successor_fingerprint(ai, binding, succ, encoded)
            index = self.binding_index(state, ai, binding, domains)
            out.append(Successor(ai, index, succ, encoded, fp))
        return out

    def binding_index(
        self, state: Record, ai: int, binding: Binding, domains: dict[int, Sequence[Binding]]
    ) -> int:
        """The index of `binding` among action `ai`'s bindings in `state`, which is what a
        link keeps (`domains`: the bindings computed for `state` so far, by action)."""
        domain = domains.get(ai)
        if domain is None:
            domain = domains[ai] = self.actions[ai].bindings(state)
        return domain.index(binding)

    def _successor_fingerprint(
        self, ai: int, binding: Binding, succ: Record, encoded: bytes
    ) -> int:
        """`fingerprint_of` a successor; a view or permute that fails says which step built it."""
        try:
            return self.fingerprint_of(succ, encoded)
        except EvaluationError as exc:
            act = self.actions[ai]
            raise EvaluationError(
                exc.kind,
                exc.name,
                f"{exc.message}, on the successor that {act.name} built",
                state=succ,
                params=act.describe(binding),
                cause=exc.cause,
            ) from exc

    def violated(self, state: Record) -> Invariant | None:
        """The first invariant (in declaration order) that `state` violates, if any."""
        for inv in self.invariants:
            if not _holds("invariant", inv.name, inv.fn, state):
                return inv
        return None

    def settle_reachability(
        self,
        result: CheckResult,
        reached: dict[str, tuple[Any, int]],
        witness: str | None,
        trace_to: Callable[[Any], list[Step]],
    ) -> None:
        """After a search that ended by itself (`result.verdict` ok, or any verdict it
        stopped at): record where each reachability property was first reached (`reached`:
        name -> (the engine's reference to the state, its depth)); if the search was complete
        and one was never reached, that is a violation; else the shortest example of
        `witness` becomes the trace (`trace_to` rebuilds it from the reference)."""
        result.reached = {r.name: reached[r.name][1] for r in self.reachables if r.name in reached}
        if result.verdict != "ok":
            return
        result.unreached = [r.name for r in self.reachables if r.name not in reached]
        if result.unreached:
            result.verdict = "violation"
        elif witness is not None:
            result.trace = trace_to(reached[witness][0])
            result.witness = witness

    def final(self, state: Record) -> bool:
        """Whether `state` is one of the spec's intended final states (a @terminal holds),
        where having no successor is no deadlock."""
        return any(_holds("terminal", t.name, t.fn, state) for t in self.terminals)

    def reached(self, state: Record, wanted: Sequence[int]) -> list[int]:
        """Of the reachability properties `wanted` (indexes into `reachables`, in order),
        those that hold in `state`."""
        props = self.reachables
        return [i for i in wanted if _holds("reachable", props[i].name, props[i].fn, state)]


def _holds(
    kind: str,
    name: str,
    fn: Callable[..., Any],
    *states: Record,
    params: dict[str, Any] | None = None,
) -> bool:
    """Evaluate a predicate of the spec (an invariant or a constraint) on `states`: it must
    return True or False."""
    try:
        ok = fn(*states)
    except Interrupted:
        raise
    except BaseException as exc:
        raise EvaluationError(
            kind, name, _raised(exc), state=states[0], params=params, cause=exc
        ) from exc
    if ok is not True and ok is not False:
        article = "an" if kind[0] in "aeiou" else "a"
        raise EvaluationError(
            kind,
            name,
            f"returned {ok!r}; {article} {kind} returns True or False",
            state=states[0],
            params=params,
        )
    return ok


def _encoded(
    succ: Record, kind: str, name: str, *, state: Record | None, params: dict[str, Any]
) -> bytes:
    """Encode a state built by spec code; a value that cannot be encoded is the spec's error.
    encode_state gives encode's bytes, reusing the cached encodings of fields shared with a
    state encoded before (a view's fields are the state's)."""
    try:
        return encode_state(succ)
    except StateError as exc:
        raise _unencodable(exc, kind, name, state, params) from exc


def _unencodable(
    exc: StateError, kind: str, name: str, state: Record | None, params: dict[str, Any]
) -> EvaluationError:
    return EvaluationError(
        kind, name, f"built a state that cannot be encoded: {exc}", state=state, params=params
    )


def _variables_differ(state: Record, expected: Record) -> str:
    """How the variables of `state` differ from those `expected` has, in words."""
    added = [str(k) for k in state if k not in expected]
    missing = [str(k) for k in expected if k not in state]
    parts = []
    if added:
        parts.append(f"with the variable{'s' * (len(added) > 1)} {', '.join(added)} added")
    if missing:
        parts.append(f"without the variable{'s' * (len(missing) > 1)} {', '.join(missing)}")
    return " and ".join(parts) or "with other variables"


def _as_list(result: Any) -> list[Any] | None:
    if isinstance(result, (list, tuple)) or inspect.isgenerator(result):
        return list(result)
    return None


def _raised(exc: BaseException) -> str:
    said = f"raised {type(exc).__name__}: {exc}"
    if not isinstance(exc, Exception):  # SystemExit, os._exit, the spec's KeyboardInterrupt
        said += " (spec code cannot end mc's run: it is reported as the spec's error)"
    return said
