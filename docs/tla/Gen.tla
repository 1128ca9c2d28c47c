---- MODULE Gen ----
\* How TLC counts generated states: one per satisfying binding of each \E and true disjunct,
\* inside called operators too, and a successor equal to another counts again.
EXTENDS Integers
VARIABLE x
Init == x \in {0, 1}
Move(d) == \/ x + d <= 2 /\ x' = x + d
           \/ x - d >= -2 /\ x' = x - d
Step == \E d \in {1, 2} : Move(d)
Home == \/ x' = 0
        \/ x = 0 /\ x' = x
Next == Step \/ Home
====
