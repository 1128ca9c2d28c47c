---- MODULE Con ----
EXTENDS Naturals
VARIABLE x
Init == x = 0
Next == x' = x + 1 \/ x' = x + 2
Bound == x <= 4
Small == x < 10
NotSix == x # 6
Grows == [][x' > x]_x
Slow == [][x' = x + 1]_x
====
