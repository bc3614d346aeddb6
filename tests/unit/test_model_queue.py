"""The embedded model's request queue (storygraph.llm.model_queue): first come, first served
across threads and processes, a waiting caller hears its place, a dead process holds no one up.
The real chat client against a server: tests/integration/test_model_queue_server.py."""

from __future__ import annotations

import subprocess
import threading
import time
from pathlib import Path

import pytest

from storygraph.llm.model_queue import DEFER_LIMIT, ModelQueue, Ticket, deferred, reading_ahead


def test_tickets_are_numbered_in_order_and_count_those_ahead(tmp_path: Path) -> None:
    queue = ModelQueue(tmp_path / "q")
    first, second, third = queue.join(), queue.join(), queue.join()
    assert first.number < second.number < third.number
    assert [queue.ahead(t) for t in (first, second, third)] == [0, 1, 2]
    queue.leave(second)
    assert queue.ahead(third) == 1
    queue.leave(first)
    assert queue.ahead(third) == 0
    assert queue.tickets() == [third]


def test_numbers_drawn_at_once_from_many_threads_are_all_different(tmp_path: Path) -> None:
    queue = ModelQueue(tmp_path / "q")
    drawn: list[Ticket] = []
    barrier = threading.Barrier(8)

    def draw() -> None:
        barrier.wait()
        for _ in range(20):
            drawn.append(queue.join())

    threads = [threading.Thread(target=draw) for _ in range(8)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert len({t.number for t in drawn}) == len(drawn) == 160


def test_a_dead_process_ticket_is_removed_and_holds_no_one_up(
    tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    queue = ModelQueue(tmp_path / "q")
    gone = subprocess.Popen(["true"])
    gone.wait()
    queue.directory.mkdir(parents=True)
    (queue.directory / Ticket(1, gone.pid).name).touch()
    (queue.directory / "next").write_text("1")
    mine = queue.join()
    assert mine.number == 2
    with caplog.at_level("WARNING"):
        assert queue.ahead(mine) == 0
    assert f"its process {gone.pid} is gone" in caplog.text
    assert queue.tickets() == [mine]


def test_a_waiting_caller_hears_how_many_are_ahead_until_its_turn(tmp_path: Path) -> None:
    queue = ModelQueue(tmp_path / "q", poll_s=0.01)
    first, second = queue.join(), queue.join()
    mine = queue.join()
    heard: list[int] = []
    waiter = threading.Thread(target=queue.wait_turn, args=(mine, heard.append))
    waiter.start()
    time.sleep(0.1)
    queue.leave(first)
    time.sleep(0.1)
    queue.leave(second)
    waiter.join(5)
    assert not waiter.is_alive()
    assert heard == [2, 1, 0]


def test_a_caller_first_in_line_hears_nothing(tmp_path: Path) -> None:
    queue = ModelQueue(tmp_path / "q")
    heard: list[int] = []
    with queue.turn(heard.append) as ticket:
        assert queue.tickets() == [ticket]
    assert heard == []
    assert queue.tickets() == []


def test_the_apps_read_ahead_is_waited_for_but_not_counted_to_a_waiting_caller(
    tmp_path: Path,
) -> None:
    # one user, the app's warm-up in flight: "1 request ahead of yours" was untrue
    # (docs/ISSUES.md#status-phases); another user's request is counted
    queue = ModelQueue(tmp_path / "q", poll_s=0.01)
    with reading_ahead():
        warm_up = queue.join()
    other = queue.join()
    mine = queue.join()
    assert warm_up.read_ahead and not other.read_ahead
    assert Ticket.parse(warm_up.name) == warm_up and Ticket.parse(warm_up.name).read_ahead
    assert queue.ahead(mine) == 2 and queue.others_ahead(mine) == 1
    heard: list[int] = []
    told = threading.Event()

    def hear(count: int) -> None:
        heard.append(count)
        told.set()

    waiter = threading.Thread(target=queue.wait_turn, args=(mine, hear))
    waiter.start()
    assert told.wait(5)  # the other request is ahead: heard before it leaves
    queue.leave(other)
    waiter.join(0.3)
    assert waiter.is_alive()  # the read-ahead still holds the model: mine waits for it
    queue.leave(warm_up)
    waiter.join(5)
    assert not waiter.is_alive()
    assert heard == [1, 0]


def test_a_caller_behind_the_read_ahead_alone_hears_nothing(tmp_path: Path) -> None:
    queue = ModelQueue(tmp_path / "q", poll_s=0.01)
    with reading_ahead():
        warm_up = queue.join()
    mine = queue.join()
    heard: list[int] = []
    waiter = threading.Thread(target=queue.wait_turn, args=(mine, heard.append))
    waiter.start()
    waiter.join(0.2)
    queue.leave(warm_up)
    waiter.join(5)
    assert not waiter.is_alive()
    assert heard == []


def test_a_deferred_request_lets_up_to_the_limit_of_later_ones_go_first(tmp_path: Path) -> None:
    # a user's self-check waits for other users' answers, but is never starved
    queue = ModelQueue(tmp_path / "q")
    with deferred():
        check = queue.join()
    later = [queue.join() for _ in range(DEFER_LIMIT + 1)]
    assert (
        check.deferred and Ticket.parse(check.name) == check and Ticket.parse(check.name).deferred
    )
    assert queue.ahead(later[0]) == 0
    assert queue.ahead(check) == DEFER_LIMIT  # the ones drawn within the limit
    assert queue.ahead(later[-1]) == DEFER_LIMIT + 1  # past it: the check goes before
    with deferred():
        second_check = queue.join()
    assert queue.ahead(second_check) == DEFER_LIMIT + 2  # checks keep their own order


def test_a_request_at_the_model_is_not_overtaken_by_one_with_an_earlier_place(
    tmp_path: Path,
) -> None:
    queue = ModelQueue(tmp_path / "q", poll_s=0.01)
    with deferred():
        check = queue.join()
    queue.wait_turn(check)  # alone: served at once, and marked so
    assert [t.serving for t in queue.tickets()] == [True]
    answer = queue.join()
    assert queue.ahead(answer) == 1
    waiter = threading.Thread(target=queue.wait_turn, args=(answer,))
    waiter.start()
    waiter.join(0.2)
    assert waiter.is_alive()  # the check is at the model: the answer waits for it
    queue.leave(check)
    waiter.join(5)
    assert not waiter.is_alive()
    queue.leave(answer)
    assert queue.tickets() == []
