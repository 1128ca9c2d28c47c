"""Symmetry reduction (TLC's SYMMETRY): states that differ only by a renaming of
interchangeable values, such as broker ids, are one state to the search.

A spec names the sets of interchangeable values and says how a renaming acts on its states:

    symmetry = ("voter_ids",)          # spec attributes: a range, a tuple, a frozenset...

    def permute(self, s, p):           # s with every voter id v replaced by p(v)
        return s.replace(
            role=p.indexed(s.role),                  # a tuple indexed by voter: reordered
            leader_id=p.indexed(s.leader_id, p),     # ... whose elements are voter ids too
            votes=p.indexed(s.votes, p.set),         # ... whose elements are sets of voters
            isolated=p.set(s.isolated),              # a set of voters
        )

The engine cannot find the ids by itself: ints carry no type in a state (broker 1 and epoch 1
look alike), so only the spec knows where ids are. Model values can be found: when every
symmetric value is a str (TLA+'s model values, "r1", "v1"), the engine renames them wherever
they occur (`renamed`; `renamed_encodings` encodes a state's images in C, with no state built)
and a spec needs no `permute` (one it has is not called). A state's fingerprint is that of the
smallest encoding (of its view, if the spec has one) over the candidate renamings: those that
sort the values by a signature no renaming changes (`Symmetry.renamings_to_try`), out of n! per set
of n values (their product for several sets), so this is for small sets: 6 for 3 brokers, 120
for 5.

Sound only if renaming ids maps the spec's behaviour to itself: a renamed state has the renamed
successors and the same invariant verdicts (`checker.testing.assert_symmetric` tests this on
every reachable state). The initial states need not be symmetric (broker 0 may start as the
leader); an action that prefers an id (the smallest broker of the ISR) breaks symmetry, and
so does a `permute` that misses a field holding ids.
"""

from __future__ import annotations

import contextlib
import itertools
import math
import operator
from collections.abc import Callable, Iterable, Mapping, Sequence
from typing import Any

from checker.errors import OUTSIDE, ConfigError, SpecError, StateError
from checker.values import fast
from checker.values.encoding import decode, encode
from checker.values.record import Map, Record, freeze, mapping

_item = tuple.__getitem__
_ALL_BUT_SHAPE = slice(1, None)
_NO_ORDER: Any = object()  # a record shape whose order is not known yet
_NOTHING: Any = object()  # nothing beside an occurrence (a tuple's item)

# Each state generated is renamed by each permutation: beyond this the search would crawl.
MAX_PERMUTATIONS = 5040  # 7!

__all__ = ["MAX_PERMUTATIONS", "Permutation", "Symmetry", "renamed", "renamed_encodings"]


class Permutation:
    """A renaming of the symmetric values, as a spec's `permute(s, p)` applies it."""

    __slots__ = ("_image", "_orders", "_takes", "moved")

    def __init__(self, image: Mapping[Any, Any]) -> None:
        self._image = dict(image)
        self.moved = {k: v for k, v in self._image.items() if k != v}  # what it renames
        # record shape -> where position i comes from (None: not a reordering)
        self._orders: dict[Any, tuple[int, ...] | None] = {}
        # tuple size -> the function that reorders a tuple of that size
        self._takes: dict[int, Callable[[Sequence[Any]], tuple[Any, ...]]] = {}

    def __call__(self, value: Any) -> Any:
        """The image of `value`; a value outside the symmetric sets (None, an epoch...) is
        itself. (True and False are never ids, though Python finds True == 1.)"""
        if type(value) is bool:
            return value
        return self._image.get(value, value)

    def set(self, values: Iterable[Any]) -> frozenset[Any]:
        """A set of values, each renamed."""
        if not values and type(values) is frozenset:
            return values
        return frozenset(rename(self._image, values))

    def indexed(self, values: tuple[Any, ...], each: Callable[[Any], Any] | None = None) -> tuple:
        """A tuple indexed by the symmetric values (`t[b]` belongs to broker b), reordered so
        that what was at position v is at position p(v); `each` maps every element too."""
        take = self._takes.get(len(values))
        if take is None:
            take = self._takes[len(values)] = _taking(self._order(len(values)))
        if each is None:
            return take(values)
        if each is self:
            return tuple(rename(self._image, take(values)))
        return tuple(map(each, take(values)))

    def _order(self, size: int) -> tuple[int, ...]:
        source = list(range(size))
        for position in range(size):
            target = self(position)
            if not (type(target) is int and 0 <= target < size):
                raise StateError(
                    f"p.indexed: position {position} is renamed {target!r}, outside a tuple of"
                    f" {size}: the symmetric values must be positions of the tuple"
                )
            source[target] = position
        return tuple(source)

    def keys(self, record: Record, each: Callable[[Any], Any] | None = None) -> Record:
        """A Record keyed by the symmetric values (`isr[b]`, `acked["a1"]`), its keys renamed;
        `each` maps every value too. A record whose keys the renaming maps onto themselves
        (names: TLA+'s model values) keeps its shape: its values are reordered, as
        `indexed` reorders a tuple."""
        cls = record.__class__
        order = self._orders.get(cls, _NO_ORDER) if cls is not Map else None
        if order is _NO_ORDER:
            order = self._orders[cls] = self._key_order(record)  # type: ignore[index]
        if order is None:
            return Record({self(k): (v if each is None else each(v)) for k, v in record.items()})
        values = _item(record, _ALL_BUT_SHAPE)
        if each is None:
            return cls((cls, *[values[i] for i in order]))  # type: ignore[call-arg]
        return cls((cls, *[each(values[i]) for i in order]))  # type: ignore[call-arg]

    def _key_order(self, record: Record) -> tuple[int, ...] | None:
        """Where each value of the renamed record comes from, if the renaming maps the
        record's keys onto themselves (else None)."""
        keys = tuple(record.keys())
        position = {k: i for i, k in enumerate(keys)}
        source = [0] * len(keys)
        for i, k in enumerate(keys):
            target = position.get(self(k))
            if target is None:
                return None
            source[target] = i
        return tuple(source)

    def __repr__(self) -> str:
        moved = {k: v for k, v in self._image.items() if k != v}
        return f"Permutation({moved})"


class _Recording(Permutation):
    """The identity, noting which tuples `permute` reorders, and which records it re-keys,
    with nothing else to rename."""

    __slots__ = ("plain", "sets")

    def __init__(self, values: Iterable[Any]) -> None:
        super().__init__({v: v for v in values})
        self.plain: list[Any] = []
        self.sets: list[Any] = []

    def set(self, values: Iterable[Any]) -> frozenset[Any]:
        self.sets.append(values)
        return super().set(values)

    def indexed(self, values: tuple[Any, ...], each: Callable[[Any], Any] | None = None) -> tuple:
        if each is None:
            self.plain.append(values)
        return super().indexed(values, each)

    def keys(self, record: Record, each: Callable[[Any], Any] | None = None) -> Record:
        if each is None:
            self.plain.append(record)
        return super().keys(record, each)


class Symmetry:
    """A spec's symmetric sets and every renaming of them (the identity first).

    A state's representative is its smallest image (its encoding, or its view's) over the
    renamings. Trying all n! of them per state is what made symmetry slow, so, when there is
    one symmetric set, the search tries only the renamings that sort the values by a
    signature: each value v's own entries in the variables `permute` reorders with
    `p.indexed(t)` alone (its epoch, role, log...: positions 0..n-1) or re-keys with
    `p.keys(r)` alone (any values: TLA+'s model values, `r["a1"]`). They move with v, so the
    signatures of a state's renamings are the same multiset. Values with equal signatures are
    tried in every order. Every state of an orbit then has the same images of the renamings to
    try, so the same representative; and a representative is always the image of a state of
    the orbit, so two orbits never share one.
    """

    def __init__(
        self, sets: dict[str, tuple[Any, ...]], permute: Callable[..., Record] | None
    ) -> None:
        self.sets = sets  # name -> its values
        # Model values (every symmetric value a str) are renamed by the engine wherever they
        # are in a state (`renamed`, in C while encoding: `renamed_encodings`), not by the
        # spec's `permute`, which they do not need.
        self.names = all(type(v) is str for values in sets.values() for v in values)
        self.permute = renamed if self.names or permute is None else permute
        per_set = [
            [dict(zip(v, image)) for image in itertools.permutations(v)] for v in sets.values()
        ]
        self.permutations = tuple(Permutation(_merged(m)) for m in itertools.product(*per_set))
        self.images = tuple(p.moved for p in self.permutations)  # what each renames
        # model value -> what stands for it in a signature: its set, not itself
        markers = {v: b"\xc1%d" % i for i, values in enumerate(sets.values()) for v in values}
        self._markers = markers
        self._remembering = Signatures(markers)  # the twin's, without the hot path
        # The variables whose entries make a value's signature (None: not learnt yet; ():
        # no signature, every renaming is tried).
        self._fields: tuple[str, ...] | None = None
        self._members: tuple[str, ...] = ()  # and the sets of values whose members count
        # Whether the values are the positions 0..n-1 (of the tuples `permute` reorders).
        self._positions = all(tuple(v) == tuple(range(len(v))) for v in sets.values())
        self._by_order: dict[tuple[Any, ...], Permutation] = {}

    @property
    def learned(self) -> bool:
        return self._fields is not None

    def learn(self, state: Record) -> None:
        """Learn the signature's variables from `state` (see `_learn`), once. Every process
        of a search must learn the same ones, or an orbit could have two representatives: the
        search learns from its first initial state (Model), and from a copy of it in which no
        two variables share an object (decoded afresh), since whether they do varies (a part
        decoded as a whole shares equal values)."""
        if self._fields is None:
            self._fields, self._members = self._learn(decode(encode(state)))

    def renamings_to_try(self, state: Record) -> Sequence[Permutation]:
        """The renamings whose images may be the representative of `state`'s orbit."""
        if self._fields is None:
            self.learn(state)
        if self.names:
            return self._named_renamings(state)
        fields, members = self._fields, self._members
        assert fields is not None and members is not None
        if not fields:
            return self.permutations
        (values,) = self.sets.values()
        n = len(values)
        try:
            # A column per variable, an entry per value (a tuple of n entries indexed by the
            # values 0..n-1 is its own column); a value's signature is its row, encoded.
            columns: list[Sequence[Any]] = []
            for f in fields:
                entry = state[f]
                whole = type(entry) is tuple and len(entry) == n and self._positions
                columns.append(entry if whole else [entry[v] for v in values])
            for m in members:
                members_of = state[m]
                columns.append([v in members_of for v in values])
            signature = list(map(encode, zip(*columns)))
        except (KeyError, IndexError, TypeError):  # a map without some values: in its whole
            return self.permutations  # orbit, so every renaming is tried for each of them
        order = sorted(range(n), key=signature.__getitem__)
        if len(set(signature)) == len(signature):  # no ties: one candidate
            return [self._sorting(tuple(order))]
        # Runs of equal signatures: every arrangement of each run is a candidate.
        runs: list[list[int]] = []
        for v in order:
            if runs and signature[runs[-1][0]] == signature[v]:
                runs[-1].append(v)
            else:
                runs.append([v])
        arrangements = itertools.product(*(itertools.permutations(run) for run in runs))
        return [self._sorting(tuple(itertools.chain(*a))) for a in arrangements]

    def _named_renamings(self, state: Record) -> Sequence[Permutation]:
        """With model values: each set's values sorted by their signature (`Signatures`),
        every order tried among equal ones (but those of the values the state does not hold,
        whose images are all the state), the sets' orders combined."""
        if signatures is signatures_python:  # (decided in each process: a Spark executor
            signature = self._remembering(state)  # may run without the hot path)
        else:
            signature = signatures(state, self._markers)
        per_set = []
        ties = False
        for values in self.sets.values():
            keyed = sorted([(signature[v], i) for i, v in enumerate(values)])
            runs: list[list[int]] = [[i] for _, i in keyed[:1]]
            for (before, _), (here, i) in itertools.pairwise(keyed):
                if here != before:
                    runs.append([i])
                elif here:
                    runs[-1].append(i)
                    ties = True
                else:  # values that do not occur: renaming them among themselves renames
                    runs.append([i])  # nothing, so their order is not tried
            per_set.append(runs)
        if not ties:  # one candidate
            return [self._named_sorting(tuple(tuple(r[0] for r in runs) for runs in per_set))]
        arranged = [
            [
                tuple(itertools.chain(*a))
                for a in itertools.product(*(itertools.permutations(r) for r in runs))
            ]
            for runs in per_set
        ]
        return [self._named_sorting(orders) for orders in itertools.product(*arranged)]

    def _named_sorting(self, orders: tuple[tuple[int, ...], ...]) -> Permutation:
        """The renaming that sends, in each set, the value at index order[i] to the value at
        index i."""
        p = self._by_order.get(orders)
        if p is None:
            image = {}
            for values, order in zip(self.sets.values(), orders):
                image.update({values[v]: values[i] for i, v in enumerate(order)})
            p = self._by_order[orders] = Permutation(image)
        return p

    def _sorting(self, order: tuple[int, ...]) -> Permutation:
        """The renaming that sends the value at index order[i] to the value at index i (the
        identity itself, `self.identity`, when the order is)."""
        p = self._by_order.get(order)
        if p is None:
            (values,) = self.sets.values()
            if order == tuple(range(len(order))):
                p = self.identity
            else:
                p = Permutation({values[v]: values[i] for i, v in enumerate(order)})
            self._by_order[order] = p
        return p

    @property
    def identity(self) -> Permutation:
        """The renaming that renames nothing: a state is its own image by it."""
        return self.permutations[0]

    def _learn(self, state: Record) -> tuple[tuple[str, ...], tuple[str, ...]]:
        """The variables `permute` reorders with `p.indexed(t)` and nothing else (a tuple
        holding one entry per value, when the values are 0..n-1), or re-keys with `p.keys(r)`
        and nothing else (a record or map whose keys are the values), when there is one
        symmetric set; and those it renames with `p.set(x)` (whether a value is in x is part
        of its signature)."""
        if len(self.sets) != 1:
            return (), ()
        (values,) = self.sets.values()
        positions = self._positions
        recording = _Recording(values)
        try:
            self.permute(state, recording)
        except OUTSIDE:
            raise
        except BaseException:  # the search renames the state again and reports what it raises
            return (), ()
        plain = {id(t) for t in recording.plain}
        sets = {id(t) for t in recording.sets}
        owners: dict[int, list[str]] = {}
        for name, value in state.items():
            owners.setdefault(id(value), []).append(name)
        alone = [names[0] for names in owners.values() if len(names) == 1]
        fields = tuple(
            n for n in alone if id(state[n]) in plain and _entries(state[n], values, positions)
        )
        members = tuple(n for n in alone if id(state[n]) in sets and type(state[n]) is frozenset)
        return fields, members

    @property
    def others(self) -> tuple[Permutation, ...]:
        """Every renaming but the identity."""
        return self.permutations[1:]

    def describe(self) -> str:
        """E.g. "voter_ids (6 permutations)"."""
        count = len(self.permutations)
        return f"{', '.join(self.sets)} ({count:,} permutation{'s' if count != 1 else ''})"

    @classmethod
    def of(cls, spec: Any) -> Symmetry | None:
        """The symmetry `spec` declares, or None; SpecError for a declaration that cannot be
        used, ConfigError for one too large to use with these constants."""
        owner = type(spec).__name__
        names = spec.symmetry
        if isinstance(names, str):
            names = (names,)
        if not names:
            return None
        if not isinstance(names, (tuple, list)) or not all(isinstance(n, str) for n in names):
            raise SpecError(f"{owner}.symmetry must be a tuple of attribute names, not {names!r}")
        sets = {name: _values(spec, owner, name) for name in names}
        names_only = all(type(v) is str for values in sets.values() for v in values)
        if not names_only and not callable(spec.permute):
            raise SpecError(
                f"{owner}.symmetry = {tuple(names)!r} needs a method permute(self, s, p) that"
                " renames every symmetric value in state s with p (see docs/writing-specs.md);"
                " symmetric values that are all names (str) need none"
            )
        seen: dict[Any, str] = {}
        for name, values in sets.items():
            for value in values:
                if value in seen:
                    raise SpecError(
                        f"{owner}.symmetry: {value!r} is in both {seen[value]} and {name}; the"
                        " symmetric sets must be disjoint"
                    )
                seen[value] = name
        count = math.prod(math.factorial(len(v)) for v in sets.values())
        if count > MAX_PERMUTATIONS:
            raise ConfigError(
                f"{owner}.symmetry over {', '.join(names)} has {count:,} permutations, more than"
                f" {MAX_PERMUTATIONS:,} (every state generated would be renamed by each): use"
                " smaller constants, or --no-symmetry"
            )
        return cls(sets, spec.permute)


def renamed(state: Record, p: Permutation) -> Record:
    """`state` with every symmetric model value (a str) renamed by `p` wherever it is: what
    `permute` is when the symmetric values are names (the engine finds them itself). The
    state's own keys, its variables' names, are never renamed."""
    return _renamed_state(state, p.moved)


def _renamed_state(state: Any, image: dict[str, str]) -> Any:
    cls = type(state)
    if cls is Map:  # keys kept, values renamed
        values = tuple([_renamed_value(v, image) for v in _item(state, 2)])
        return Map((Map, _item(state, 1), values))  # type: ignore[call-arg]
    if isinstance(state, Record):
        return cls((cls, *[_renamed_value(v, image) for v in _item(state, _ALL_BUT_SHAPE)]))
    return _renamed_value(state, image)


def _renamed_value(value: Any, image: dict[str, str]) -> Any:
    kind = type(value)
    if kind is str:
        return image.get(value, value)
    if kind is tuple:
        return tuple([_renamed_value(v, image) for v in value])
    if kind is frozenset:
        return frozenset([_renamed_value(v, image) for v in value])
    if isinstance(value, Record):  # keys renamed too, then put in canonical order
        return mapping(
            {_renamed_value(k, image): _renamed_value(v, image) for k, v in value.items()}
        )
    return value


def renamed_encodings_python(state: Record, images: tuple[dict[str, str], ...]) -> list[bytes]:
    """The encoding of `state` renamed by each of `images` (str -> str: the model values a
    renaming moves), as `renamed` renames it: one C call for them all, with the hot path."""
    return [encode(_renamed_state(state, image)) for image in images]


renamed_encodings = fast.pick(renamed_encodings_python)


class Signatures:
    """Each model value's signature in a state (calling it with the state): where it occurs, each
    occurrence described by its path from the state's variable and by what surrounds it on
    that path (the set element, the key's value, the value's key) with every model value
    replaced by its set's marker, sorted. Renaming the values does not change the signature
    of a value's image: a renamed state's values sort the same way, so the candidate
    renamings that sort them (every order among equal signatures) give every state of an
    orbit the same images, and so the same representative.

    A value's occurrences inside a container are remembered by the container's identity (a
    successor shares most of them with its parent: the messages of a set, a map's entries)."""

    def __init__(self, markers: dict[str, bytes]) -> None:
        self.markers = markers  # model value -> what stands for it: its set's marker
        self._occurrences: dict[int, tuple[Any, list[tuple[str, bytes]]]] = {}
        self._blinded: dict[int, tuple[Any, bytes]] = {}

    def __getstate__(self) -> dict[str, Any]:
        """A copy sent to another process travels without the caches."""
        return {"markers": self.markers, "_occurrences": {}, "_blinded": {}}

    def __call__(self, state: Record) -> dict[str, list[bytes]]:
        markers = self.markers
        found: dict[str, list[bytes]] = {v: [] for v in markers}
        if len(self._occurrences) > _REMEMBERED or len(self._blinded) > _REMEMBERED:
            self._occurrences.clear()
            self._blinded.clear()
        for name, value in state.items():
            kind = type(value)
            if kind is str:
                if value in markers:
                    found[value].append(name.encode())
            elif kind is tuple or kind is frozenset or isinstance(value, Record):
                head = name.encode()
                for v, at in self._occurring(value):
                    found[v].append(head + at)
        for places in found.values():
            places.sort()
        return found

    def _occurring(self, x: Any) -> list[tuple[str, bytes]]:
        """The model values in container `x`, each with its path and surroundings in `x`."""
        known = self._occurrences.get(id(x))
        if known is not None and known[0] is x:
            return known[1]
        markers = self.markers
        out: list[tuple[str, bytes]] = []
        kind = type(x)
        if kind is tuple:
            for i, v in enumerate(x):
                self._add(out, v, b"/%d" % i, _NOTHING)
        elif kind is frozenset:
            for v in x:
                if type(v) is str:
                    if v in markers:
                        out.append((v, b"/e" + markers[v]))
                else:
                    self._add(out, v, b"/e", v)
        else:
            for k, v in x.items():
                if type(k) is str:
                    if k in markers:
                        out.append((k, b"/k" + self.blind(v)))
                else:
                    self._add(out, k, b"/k", v)
                self._add(out, v, b"/v", k)
        self._occurrences[id(x)] = (x, out)
        return out

    def _add(self, out: list[tuple[str, bytes]], v: Any, step: bytes, beside: Any) -> None:
        """v's occurrences, reached by `step` and described with `beside` (blinded, unless
        it is _NOTHING)."""
        kind = type(v)
        if kind is str:
            if v in self.markers:
                out.append((v, step if beside is _NOTHING else step + self.blind(beside)))
        elif kind is tuple or kind is frozenset or isinstance(v, Record):
            inner = self._occurring(v)
            if inner:
                if beside is not _NOTHING:
                    step += self.blind(beside)
                out.extend([(w, step + at) for w, at in inner])

    def blind(self, x: Any) -> bytes:
        """`x` with every model value replaced by its set's marker, as bytes: the same for
        every renaming of x."""
        kind = type(x)
        if kind is str:
            return self.markers.get(x) or encode(x)
        if not (kind is tuple or kind is frozenset or isinstance(x, Record)):
            return encode(x)
        known = self._blinded.get(id(x))
        if known is not None and known[0] is x:
            return known[1]
        blind = self.blind
        if kind is tuple:
            data = b"(" + b",".join([blind(v) for v in x]) + b")"
        elif kind is frozenset:
            data = b"{" + b",".join(sorted([blind(v) for v in x])) + b"}"
        else:
            pairs = sorted([blind(k) + b":" + blind(v) for k, v in x.items()])
            data = b"[" + b",".join(pairs) + b"]"
        self._blinded[id(x)] = (x, data)
        return data


_REMEMBERED = 1 << 16  # containers whose occurrences (and blinded bytes) Signatures keeps


def signatures_python(state: Record, markers: dict[str, bytes]) -> dict[str, list[bytes]]:
    """Each model value's signature in `state` (`Signatures`, without its memory): the C
    version, fast enough to remember nothing, is what a search calls with the hot path."""
    return Signatures(markers)(state)


signatures = fast.pick(signatures_python)


def rename_python(image: dict[Any, Any], values: Iterable[Any]) -> list[Any]:
    """Each of `values` renamed by `image` (a value not in it is itself; True and False are
    never renamed, though Python finds True == 1): a Permutation mapped over a tuple or a set
    (the C version without a Python frame)."""
    get = image.get
    return [v if type(v) is bool else get(v, v) for v in values]


rename = fast.pick(rename_python)


def _taking(order: tuple[int, ...]) -> Callable[[Sequence[Any]], tuple[Any, ...]]:
    """A function returning the tuple of a sequence's items at `order` (itemgetter, in C)."""
    if len(order) > 1:
        return operator.itemgetter(*order)
    return lambda values: tuple([values[i] for i in order])  # (itemgetter takes 1 or more)


def _entries(value: Any, values: tuple[Any, ...], positions: bool) -> bool:
    """Whether `value` holds one entry per symmetric value: a tuple indexed by them (if they
    are positions 0..n-1), or a record or map keyed by them."""
    if type(value) is tuple:
        return positions and len(value) == len(values)
    return isinstance(value, Record) and set(value.keys()) == set(values)


def _values(spec: Any, owner: str, name: str) -> tuple[Any, ...]:
    if not hasattr(spec, name):
        raise SpecError(f"{owner}.symmetry names {name!r}, which is not a spec attribute")
    found = getattr(spec, name)
    values = None
    if not (callable(found) or isinstance(found, (str, bytes, Record))):
        with contextlib.suppress(TypeError, StateError):  # not iterable, or not values
            values = tuple(freeze(v) for v in found)
    if values is None:
        raise SpecError(
            f"{owner}.symmetry names {name!r}: it must be a collection of values (e.g. a"
            f" property returning range(...)), not {found!r}"
        )
    if any(type(v) is bool for v in values) or len(set(values)) != len(values):
        raise SpecError(f"{owner}.symmetry: {name} = {values!r} must hold distinct non-bool values")
    return values


def _merged(mappings: Iterable[dict[Any, Any]]) -> dict[Any, Any]:
    merged: dict[Any, Any] = {}
    for one in mappings:
        merged.update(one)
    return merged
