"""The embedded model's install progress, shown while the app answers without a model.

`make run` opens the app while the model installs in the background; this box follows the
install (`storygraph.llm.install_status`) every few seconds and, once the model is ready, lets
the services start it and reruns the page, so no restart is needed.
"""

from __future__ import annotations

import streamlit as st

from storygraph.llm.install_status import progress
from storygraph.services import Services

REFRESH_S = 5


def render(services: Services) -> None:
    """Nothing unless the embedded model is configured and not installed yet."""
    if services.model_pending:
        _install_box(services)


@st.fragment(run_every=REFRESH_S)
def _install_box(services: Services) -> None:
    if services.refresh_model() or not services.model_pending:
        st.rerun()  # the whole page: the badge and the tabs now use the model
    shown = progress(services.settings)
    with st.container(border=True, key="model_install"):
        st.progress((shown.percent or 0) / 100 if shown.state != "ready" else 1.0)  # this step
        if shown.state in ("failed", "interrupted"):
            st.error(shown.line(), icon=":material/error:")
        elif shown.state == "ready":
            st.caption("The embedded model is installed; starting it…")
        else:
            st.caption(shown.line() + " Answers list the graph's facts until it is ready.")
