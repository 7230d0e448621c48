"""The drafter's model card's acceptance figures, set beside the measured ones dataset by dataset.

The card's figure for a dataset goes on each measured row of that dataset (every
thinking mode: the card's label says which settings it was stated under). Rows of
the shipped prompt sets (math, code, chat) get none: a card states no such figure.
"""

from __future__ import annotations

from specops.tools.drafters.card_acceptance import CardAcceptance

from .schema import AcceptanceSection, AcceptanceStat


def _beside(stat: AcceptanceStat, stated: CardAcceptance) -> AcceptanceStat:
    figure = stated.figures.get(stat.category)
    return stat if figure is None else stat.model_copy(update={"card": figure})


def beside_card(section: AcceptanceSection, stated: CardAcceptance | None) -> AcceptanceSection:
    """The section with the card's figure on each dataset it states; unchanged when it states none measured here."""
    if stated is None or not any(c.category in stated.figures for c in section.categories):
        return section
    return section.model_copy(
        update={"categories": [_beside(c, stated) for c in section.categories], "card_label": stated.label}
    )
