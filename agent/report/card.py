"""A drafter's model card's acceptance figures, set beside the ones measured on that drafter, dataset by dataset.

Each acceptance section gets the card of the drafter its configuration serves
(drafters.py), never another drafter's. The card's figure for a dataset goes on
each measured row of that dataset (every thinking mode: the card's label says
which settings it was stated under). Rows of the shipped prompt sets (math,
code, chat) get none: a card states no such figure.
"""

from __future__ import annotations

from .schema import AcceptanceSection, AcceptanceStat, CardFigures


def _beside(stat: AcceptanceStat, stated: CardFigures) -> AcceptanceStat:
    figure = stated.figures.get(stat.category)
    return stat if figure is None else stat.model_copy(update={"card": figure})


def beside_card(section: AcceptanceSection, stated: CardFigures | None) -> AcceptanceSection:
    """The section with the card's figure on each dataset it states; unchanged when it states none measured here."""
    if stated is None or not any(c.category in stated.figures for c in section.categories):
        return section
    return section.model_copy(
        update={"categories": [_beside(c, stated) for c in section.categories], "card_label": stated.label}
    )
