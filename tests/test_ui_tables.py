"""The dashboard's summary tables: counts stay integers beside a missing value, other numbers show three decimals,
a missing value shows as a dash, and the values stay numbers (so the columns sort as numbers)."""

import pandas as pd

from mortar.ui.tables import MISSING, tidy


def test_a_table_shows_counts_rates_and_missing_values_tidily():
    frame = pd.DataFrame({"method": ["RBT", "DialTest"], "L1": [None, 14.0], "CV": [None, 0.98125], "NBugs": [3, 18]})
    styled = tidy(frame)
    assert str(styled.data["L1"].dtype) == "Int64" and str(styled.data["CV"].dtype) == "Float64"
    assert styled.data["L1"].tolist()[1] == 14  # still a number
    html = styled.to_html()
    assert ">14<" in html and ">0.981<" in html and ">18<" in html and f">{MISSING}<" in html
    assert "None" not in html and "nan" not in html.lower().replace("nanoseconds", "")
