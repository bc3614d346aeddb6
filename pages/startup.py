"""The start-up status under the title: the parts still loading in the background (the model's
server, the sentence encoder and dictionary), each named with how long it has taken, and a bar of
the parts ready. It follows them every second and reruns the page once they are over, so the
badge and the tabs use the model without a reload (storygraph.ui.startup)."""

from __future__ import annotations

import streamlit as st

from storygraph.services import Services
from storygraph.ui.startup import AppStartup

REFRESH_S = 1


def render(services: Services, startup: AppStartup) -> None:
    """The status while a part is loading; after, only a part that failed (a failed model
    start is among the app's warnings already)."""
    if startup.busy(services.model_pending):
        _status_box(services, startup)
    elif startup.question_path.step.state == "failed":
        st.warning(startup.question_path.step.line())


@st.fragment(run_every=REFRESH_S)
def _status_box(services: Services, startup: AppStartup) -> None:
    services.refresh_model()  # picks the model's server up once it answers
    if not startup.busy(services.model_pending):
        st.rerun()  # the whole page: the badge and the tabs now use what was loaded
    steps = startup.steps()
    ready = sum(s.state == "done" for s in steps)
    with st.container(border=True, key="startup_status"):
        st.progress(ready / len(steps), text=f"Starting: {ready} of {len(steps)} parts ready")
        for step in steps:
            st.caption(step.line())
        if services.model_pending:
            st.caption("Until the model is ready, answers list the graph's facts.")
