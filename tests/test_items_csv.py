"""Counting items from CSV files (scale/items_csv.py): a byte that is not UTF-8 is refused naming
the file, the line and the byte."""
import pytest


def test_bad_csv_byte_names_its_line(tmp_path):
    pytest.importorskip("pyarrow")
    from ldpcompress.scale.items_csv import count_csv_items
    path = tmp_path / "items.csv"
    path.write_bytes(b"1\n2\n3\xff\n4\n")
    with pytest.raises(ValueError, match=f"{path}, line 3, byte 2: not UTF-8"):
        count_csv_items(path, 8)
