"""A B-tree with get, insert and update, one operation at a time (Lorin Hochstein).

Translated from github.com/tlaplus/Examples, specifications/btree/btree.tla, checked with
specifications/btree/btree.cfg (Vals = {x, y, z}, MaxOccupancy = 2, MaxNode = 8, MaxKey = 4,
INVARIANT TypeOk InnersMustHaveLast LeavesCantHaveLast KeyOrderPreserved
KeysInLeavesAreUnique FreeNodesRemain; the refinement of kvstore is commented out there).

Nodes = 1..MaxNode and Keys = 1..MaxKey. NIL is None, MISSING the string "missing", the
states (READY, ...) the names the cfg gives them ("ready", ...) and Vals strings. The
functions over Nodes are maps keyed by node; `childOf` and `valOf`, functions over
Nodes \\X Keys, are maps keyed by (node, key) pairs. Every CHOOSE is `choose`, which picks
what TLC picks (the smallest node, for ChooseFreeNode).
"""

from checker import Record, Spec, action, choose, constant, invariant, put

READY, GET_VALUE, FIND_LEAF_TO_ADD = "ready", "get_value", "find_leaf_to_add"
WHICH_TO_SPLIT, ADD_TO_LEAF, UPDATE_LEAF = "which_to_split", "add_to_leaf", "update_leaf"
SPLIT_LEAF, SPLIT_INNER = "split_leaf", "split_inner"
SPLIT_ROOT_LEAF, SPLIT_ROOT_INNER = "split_root_leaf", "split_root_inner"
STATES = (
    READY,
    GET_VALUE,
    FIND_LEAF_TO_ADD,
    WHICH_TO_SPLIT,
    ADD_TO_LEAF,
    SPLIT_LEAF,
    SPLIT_INNER,
    SPLIT_ROOT_LEAF,
    SPLIT_ROOT_INNER,
    UPDATE_LEAF,
)
MISSING = "missing"


class BTree(Spec):
    """A B-tree: keys in leaves, full nodes split on insert, up to a new root."""

    vals = constant("x,y,z", "Vals, comma-separated (btree.cfg: x,y,z)")
    MaxKey = constant(4, "Keys = 1..MaxKey (btree.cfg: 4)", min=1)
    MaxNode = constant(8, "Nodes = 1..MaxNode (btree.cfg: 8)", min=1)
    MaxOccupancy = constant(2, "keys a node holds at most (btree.cfg: 2)", min=1)

    lastOf: dict[int, int | None]
    focus: int | None
    op: str | None
    args: object
    ret: str | None

    @property
    def Vals(self) -> tuple[str, ...]:
        return tuple(self.vals.split(","))

    @property
    def Keys(self) -> range:
        return range(1, self.MaxKey + 1)

    @property
    def Nodes(self) -> range:
        return range(1, self.MaxNode + 1)

    def ChildNodeFor(self, s, node, key):
        """The child of node to follow for key: at the smallest of its keys above key."""
        keys = s.keysOf[node]
        if not keys or key >= max(keys):
            return s.lastOf[node]
        closestKey = choose(
            keys, lambda k: k > key and not any(key < j < k for j in keys - {k})
        )
        return s.childOf[node, closestKey]

    def FindLeafNode(self, s, node, key):
        if s.isLeaf[node]:
            return node
        return self.FindLeafNode(s, self.ChildNodeFor(s, node, key), key)

    def AtMaxOccupancy(self, s, node):
        return len(s.keysOf[node]) == self.MaxOccupancy

    def IsFree(self, s, node):
        """A node not yet in the tree: a leaf with no keys."""
        return s.isLeaf[node] and not s.keysOf[node]

    def ChooseFreeNode(self, s):
        return choose(self.Nodes, lambda n: self.IsFree(s, n))

    def ParentOf(self, s, n):
        return choose(
            self.Nodes,
            lambda p: any(n == s.childOf[p, k] for k in self.Keys) or s.lastOf[p] == n,
        )

    def ParentKeyOf(self, s, node):
        p = self.ParentOf(s, node)
        return choose(s.keysOf[p], lambda k: s.childOf[p, k] == node)

    def IsLastOfParent(self, s, node):
        return s.lastOf[self.ParentOf(s, node)] == node

    def PivotOf(self, keys):
        """The midpoint of keys; of an even number, the upper middle one."""

        def is_pivot(k):
            smaller = len({x for x in keys if x < k})
            larger = len({x for x in keys if x > k})
            return smaller == larger or smaller == larger + 1

        return choose(keys, is_pivot)

    def init(self):
        nodes, keys = self.Nodes, self.Keys
        s = Record(
            isLeaf={n: True for n in nodes},
            keysOf={n: frozenset() for n in nodes},
            childOf={(n, k): None for n in nodes for k in keys},
            lastOf={n: None for n in nodes},
            valOf={(n, k): None for n in nodes for k in keys},
            root=0,
            focus=None,
            toSplit=(),
            op=None,
            args=None,
            ret=None,
            state=READY,
        )
        return s.replace(root=self.ChooseFreeNode(s))

    @action(key="Keys")
    def GetReq(self, s, key):
        if s.state != READY:
            return None
        return s.replace(op="get", args=(key,), ret=None, state=GET_VALUE)

    @action
    def GetValue(self, s):
        if s.state != GET_VALUE:
            return None
        key = s.args[0]
        node = self.FindLeafNode(s, s.root, key)
        ret = s.valOf[node, key] if key in s.keysOf[node] else MISSING
        return s.replace(state=READY, ret=ret)

    @action(key="Keys", val="Vals")
    def InsertReq(self, s, key, val):
        if s.state != READY:
            return None
        return s.replace(op="insert", args=(key, val), ret=None, state=FIND_LEAF_TO_ADD)

    @action(key="Keys", val="Vals")
    def UpdateReq(self, s, key, val):
        if s.state != READY:
            return None
        leaf = self.FindLeafNode(s, s.root, key)
        return s.replace(op="update", args=(key, val), ret=None, focus=leaf, state=UPDATE_LEAF)

    @action
    def UpdateLeaf(self, s):
        if s.state != UPDATE_LEAF:
            return None
        key, val = s.args
        present = key in s.keysOf[s.focus]
        return s.replace(
            valOf=put(s.valOf, (s.focus, key), val) if present else s.valOf,
            ret="ok" if present else "error",
            state=READY,
            focus=None,
        )

    @action
    def FindLeafToAdd(self, s):
        if s.state != FIND_LEAF_TO_ADD:
            return None
        leaf = self.FindLeafNode(s, s.root, s.args[0])
        full = self.AtMaxOccupancy(s, leaf)
        return s.replace(
            focus=leaf,
            toSplit=(leaf,) if full else (),
            state=WHICH_TO_SPLIT if full else ADD_TO_LEAF,
        )

    @action
    def WhichToSplit(self, s):
        if s.state != WHICH_TO_SPLIT:
            return None
        node = s.toSplit[0]
        if node == s.root:  # ParentOf(root) is never needed
            state = SPLIT_ROOT_LEAF if s.isLeaf[node] else SPLIT_ROOT_INNER
            return s.replace(state=state)
        parent = self.ParentOf(s, node)
        splitParent = self.AtMaxOccupancy(s, parent)
        noMoreSplits = not splitParent
        toSplit = (parent,) + s.toSplit if splitParent else s.toSplit
        state = WHICH_TO_SPLIT
        if noMoreSplits:
            state = SPLIT_LEAF if s.isLeaf[node] else SPLIT_INNER
        return s.replace(toSplit=toSplit, state=state)

    @action
    def AddToLeaf(self, s):
        """Add args' <<key, val>> to the leaf in focus; a key already there is an error."""
        if s.state != ADD_TO_LEAF:
            return None
        key, val = s.args
        new = key not in s.keysOf[s.focus]
        return s.replace(
            ret="ok" if new else "error",
            keysOf=put(s.keysOf, s.focus, s.keysOf[s.focus] | {key}) if new else s.keysOf,
            valOf=put(s.valOf, (s.focus, key), val) if new else s.valOf,
            state=READY,
        )

    def moved_values(self, s, n1, n2, n2Keys):
        """valOf with the values of n2Keys moved from leaf n1 to leaf n2."""
        return Record(
            {
                (n, k): None
                if n == n1 and k in n2Keys
                else s.valOf[n1, k]
                if n == n2 and k in n2Keys
                else s.valOf[n, k]
                for n in self.Nodes
                for k in self.Keys
            }
        )

    @action
    def SplitRootLeaf(self, s):
        if s.state != SPLIT_ROOT_LEAF:
            return None
        n1 = s.toSplit[0]
        n2 = self.ChooseFreeNode(s)
        newRoot = choose(self.Nodes, lambda n: self.IsFree(s, n) and n != n2)
        keys = s.keysOf[n1]
        pivot = self.PivotOf(keys)
        n1Keys = frozenset(x for x in keys if x < pivot)
        n2Keys = frozenset(x for x in keys if x >= pivot)
        keyToInsert = s.args[0]
        isLeaf = put(put(s.isLeaf, newRoot, False), n2, True)
        keysOf = put(put(put(s.keysOf, newRoot, frozenset({pivot})), n1, n1Keys), n2, n2Keys)
        return s.replace(
            root=newRoot,
            isLeaf=isLeaf,
            keysOf=keysOf,
            childOf=put(s.childOf, (newRoot, pivot), n1),
            lastOf=put(s.lastOf, newRoot, n2),
            valOf=self.moved_values(s, n1, n2, n2Keys),
            state=ADD_TO_LEAF,
            focus=n1 if keyToInsert < pivot else n2,
        )

    @action
    def SplitRootInner(self, s):
        if s.state != SPLIT_ROOT_INNER:
            return None
        n1 = s.toSplit[0]
        n2 = self.ChooseFreeNode(s)
        newRoot = choose(self.Nodes, lambda n: self.IsFree(s, n) and n != n2)
        keys = s.keysOf[n1]
        pivot = self.PivotOf(keys)
        # the pivot of an inner node moves up to the parent only
        n1Keys = frozenset(x for x in keys if x < pivot)
        n2Keys = frozenset(x for x in keys if x > pivot)

        def child(n, k):
            if n == newRoot and k == pivot:
                return n1
            if n == n1 and k in n2Keys:
                return None
            if n == n1 and k in n1Keys:
                return s.childOf[n1, k]
            if n == n2 and k in n2Keys:
                return s.childOf[n1, k]
            return s.childOf[n, k]

        isLeaf = put(put(s.isLeaf, newRoot, False), n2, False)
        keysOf = put(put(put(s.keysOf, newRoot, frozenset({pivot})), n1, n1Keys), n2, n2Keys)
        lastOf = put(
            put(put(s.lastOf, newRoot, n2), n1, s.childOf[n1, pivot]), n2, s.lastOf[n1]
        )
        return s.replace(
            root=newRoot,
            isLeaf=isLeaf,
            keysOf=keysOf,
            childOf=Record({(n, k): child(n, k) for n in self.Nodes for k in self.Keys}),
            lastOf=lastOf,
            toSplit=(),
            state=ADD_TO_LEAF,
        )

    @action
    def SplitLeaf(self, s):
        if s.state != SPLIT_LEAF:
            return None
        n1 = s.toSplit[0]
        n2 = self.ChooseFreeNode(s)
        keys = s.keysOf[n1]
        pivot = self.PivotOf(keys)
        parent = self.ParentOf(s, n1)
        n1Keys = frozenset(x for x in keys if x < pivot)
        n2Keys = frozenset(x for x in keys if x >= pivot)
        keyToInsert = s.args[0]
        keysOf = put(
            put(put(s.keysOf, parent, s.keysOf[parent] | {pivot}), n1, n1Keys), n2, n2Keys
        )
        last = self.IsLastOfParent(s, n1)
        childOf = put(s.childOf, (parent, pivot), n1)
        if not last:
            childOf = put(childOf, (parent, self.ParentKeyOf(s, n1)), n2)
        return s.replace(
            isLeaf=put(s.isLeaf, n2, True),
            keysOf=keysOf,
            childOf=childOf,
            lastOf=put(s.lastOf, parent, n2) if last else s.lastOf,
            valOf=self.moved_values(s, n1, n2, n2Keys),
            state=ADD_TO_LEAF,
            focus=n1 if keyToInsert < pivot else n2,
        )

    def Leaves(self, s):
        return {n for n in self.Nodes if s.isLeaf[n]}

    def Inners(self, s):
        return {n for n in self.Nodes if not s.isLeaf[n]}

    @invariant
    def TypeOk(self, s):
        nodes, keys, vals = set(self.Nodes), set(self.Keys), set(self.Vals)
        return (
            s.root in nodes
            and all(isinstance(s.isLeaf[n], bool) for n in nodes)
            and all(s.keysOf[n] <= keys for n in nodes)
            and all(c in nodes or c is None for c in s.childOf.values())
            and all(n in nodes or n is None for n in s.lastOf.values())
            and all(v in vals or v is None for v in s.valOf.values())
            and (s.focus in nodes or s.focus is None)
            and all(n in nodes for n in s.toSplit)
            and s.op in ("get", "insert", "update", None)
            and (s.ret in vals or s.ret in ("ok", "error", MISSING, None))
            and s.state in STATES
        )

    @invariant
    def InnersMustHaveLast(self, s):
        return all(s.lastOf[n] is not None for n in self.Inners(s))

    @invariant
    def KeyOrderPreserved(self, s):
        return all(
            kc < k
            for n in self.Inners(s)
            for k in s.keysOf[n]
            for kc in s.keysOf[s.childOf[n, k]]
        )

    @invariant
    def LeavesCantHaveLast(self, s):
        return all(s.lastOf[n] is None for n in self.Leaves(s))

    @invariant
    def KeysInLeavesAreUnique(self, s):
        leaves = self.Leaves(s)
        return all(
            not (s.keysOf[n1] & s.keysOf[n2]) or n1 == n2 for n1 in leaves for n2 in leaves
        )

    @invariant
    def FreeNodesRemain(self, s):
        return any(self.IsFree(s, n) for n in self.Nodes)
