---- MODULE Choose ----
\* TLC picks (java tlc2.TLC -dump): x = <<1, "zeta", "b", M1, <<1, 1>>, {1}, [a |-> 1]>>
EXTENDS Naturals
CONSTANTS M1, M2, M3
VARIABLE x
Init == x = <<CHOOSE v \in {3, 1, 2} : TRUE,
              CHOOSE v \in {"zeta", "alpha", "mid"} : TRUE,
              CHOOSE v \in {"b", "a"} : v # "a",
              CHOOSE v \in {M3, M1, M2} : TRUE,
              CHOOSE v \in {<<2, 1>>, <<1, 2>>, <<1, 1>>} : TRUE,
              CHOOSE v \in {{2}, {1, 2}, {1}} : TRUE,
              CHOOSE v \in {[a |-> 2], [a |-> 1]} : TRUE>>
Next == UNCHANGED x
====
