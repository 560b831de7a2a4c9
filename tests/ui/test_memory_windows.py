"""The Memories page's episodes, a window at a time: the first window with the total, the next ones as
the reader scrolls or presses the button, the end of the list, and a filter that starts it again."""

from __future__ import annotations

import re

from playwright.sync_api import expect

from tests.factories import episode_body
from tests.ui.conftest import Tab

EPISODES = 120  # three windows of 50: 50, 50 and 20


def _write(tab: Tab) -> str:
    agent = tab.server.key()
    with tab.server.client(agent) as http:
        for start in range(0, EPISODES, 100):
            bodies = [
                episode_body(f"Turn {i} of a long session.", turn=i, session=f"s{i % 3}")
                for i in range(start, min(start + 100, EPISODES))
            ]
            assert http.post("/v1/episodes/batch", json={"episodes": bodies}).status_code == 200
    return agent


def _turns(tab: Tab) -> list[int]:
    keys = tab.page.locator("#episodes tbody tr:not(.window-edge) td.key").all_text_contents()
    return [int(k.rsplit("/", 1)[1]) for k in keys]


def test_scrolling_loads_the_next_windows_until_the_list_ends(tab: Tab) -> None:
    tab.sign_in(_write(tab), "/ui/memories?show=episodes&limit=50")
    rows, more, end = (tab.page.locator(s) for s in ("#episodes tbody tr", "#episodes-more", "#episodes-end"))
    expect(tab.page.locator("#episodes-total")).to_have_text(f"{EPISODES}")  # the total, with the first window
    expect(more).to_contain_text(f"50 of {EPISODES} shown")
    assert rows.count() == 51 and end.count() == 0  # the window and its next row; no end yet (the row above is there)
    more.scroll_into_view_if_needed()  # as a reader scrolls down to it
    expect(more).to_contain_text(f"100 of {EPISODES} shown")
    tab.page.locator("#episodes-more").scroll_into_view_if_needed()
    expect(end).to_have_text(f"End of the list: {EPISODES} episodes shown.")
    expect(more).to_have_count(0)  # the end replaced the row that loads more (which the steps above saw)
    assert _turns(tab) == list(reversed(range(EPISODES)))  # newest first, every episode once: keyset paging


def test_the_next_window_by_keyboard_takes_the_focus_to_its_first_row(tab: Tab) -> None:
    tab.sign_in(_write(tab), "/ui/memories?show=episodes&limit=50")
    fiftieth = tab.page.locator("#episodes tbody tr:nth-child(50) a")  # the first window's last row
    fiftieth.focus()
    expect(fiftieth).to_be_focused()  # a window that scrolling loads leaves the focus where the reader is
    tab.page.keyboard.press("Tab")  # onto the button (or, if the window came already, into its first row)
    expect(tab.page.locator("#from-51 a")).to_be_focused()  # the first row of the window it loaded
    tab.page.keyboard.press("Tab")
    expect(tab.page.locator("#from-51 + tr a")).to_be_focused()  # and on through the new rows
    expect(tab.page.locator("#episodes-more")).to_contain_text(f"100 of {EPISODES} shown")
    assert _turns(tab)[49:51] == [EPISODES - 50, EPISODES - 51]  # the second window goes on where the first ended


def test_a_filter_starts_the_list_again_from_its_first_window(tab: Tab) -> None:
    tab.sign_in(_write(tab), "/ui/memories?show=episodes&limit=50")
    tab.page.locator("#episodes-more").scroll_into_view_if_needed()
    expect(tab.page.locator("#episodes-more")).to_contain_text(f"100 of {EPISODES} shown")
    tab.page.get_by_label("Session (episodes)").fill("s1")
    tab.page.get_by_role("button", name="Apply filters").click()
    in_s1 = [i for i in reversed(range(EPISODES)) if i % 3 == 1]
    expect(tab.page.locator("#episodes-total")).to_have_text(f"{len(in_s1)}")
    expect(tab.page.locator("#episodes-end")).to_have_text(f"End of the list: {len(in_s1)} episodes shown.")
    assert _turns(tab) == in_s1  # that session's episodes from its newest: the window started again
    assert "cursor" not in tab.page.url and re.search(r"session=s1", tab.page.url)
