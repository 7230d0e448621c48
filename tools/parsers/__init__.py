"""Parsers for what host commands print: one module per output format.

Each parser takes the text a command printed and returns typed records; none
runs anything. They are tested against real captures (shared/captures/).
"""
