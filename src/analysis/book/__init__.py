"""The book layer: glue and tables for the notebooks (:mod:`.report`), figures
(:mod:`.plots`), the cost preview (:mod:`.plan`), the lab's table of phenomena
(:mod:`.phenomena`), the hidden preamble (:mod:`.preamble`) and the scoreboard
(:mod:`.scoreboard`). It sits on top: it may import every other layer, and none
imports it."""
