"""Guides: scores of where a system under test is fragile, used to choose mutations or to order tests.

``gini``: DeepGini impurity of the SUT's next-token distributions over its answer, and DialTest's
Gini-guided search (Algorithm 1) with its random baseline at the same budget.
"""
