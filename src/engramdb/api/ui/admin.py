"""Admin: the tenant's keys (create with a scope grant, list, revoke), its policy, the tenant itself."""

from __future__ import annotations

from typing import Annotated, Any

from fastapi import APIRouter, Depends, Form, Request
from fastapi.responses import HTMLResponse

from engramdb.api.routes import authenticated
from engramdb.api.ui.common import call, part, render, replace_url
from engramdb.core.auth import ROLES, Caller
from engramdb.errors import InvalidInputError, NotFoundError
from engramdb.models.admin import KeyCreated
from engramdb.models.policy import ORIGINS, TRUST_CLASSES

router = APIRouter(include_in_schema=False)
Authenticated = Annotated[Caller, Depends(authenticated)]
Text = Annotated[str, Form()]


def _page(
    request: Request, caller: Caller, *, created: KeyCreated | None = None, done: str | None = None, status: int = 200
) -> HTMLResponse:
    keys = call(request, caller, "list_keys").keys
    policy = call(request, caller, "get_policy")
    scopes = call(request, caller, "list_scopes", {"limit": 1000}).scopes
    return render(
        request,
        "admin.html",
        status,
        replace_url(request, "admin"),
        caller=caller,
        keys=keys,
        policy=policy,
        scopes=scopes,
        created=created,
        done=done,
        roles=ROLES,
        trust_classes=TRUST_CLASSES,
        origins=ORIGINS,
    )


@router.get("/ui/part/admin")
@part
def admin(request: Request, caller: Authenticated) -> HTMLResponse:
    return _page(request, caller)


@router.post("/ui/part/admin/keys")
@part
def create_key(
    request: Request,
    caller: Authenticated,
    role: Text,
    label: Text = "",
    agent_id: Text = "",
    profile_id: Text = "",
    privacy_scope: Text = "",
    participant_scope_hash: Text = "",
    sandbox_eligible: Text = "",
) -> HTMLResponse:
    grant: dict[str, Any] = {
        "agentId": agent_id,
        "profileId": profile_id,
        "privacyScope": privacy_scope,
        "participantScopeHash": participant_scope_hash,
    }
    grant = {k: v.strip() for k, v in grant.items() if v.strip()}
    if sandbox_eligible:
        grant["sandboxEligible"] = sandbox_eligible == "true"
    created = call(request, caller, "create_key", body={"role": role, "grant": grant, "label": label or None})
    return _page(request, caller, created=created)


@router.post("/ui/part/admin/keys/{key_id}/revoke")
@part
def revoke_key(request: Request, caller: Authenticated, key_id: str, confirm: Text = "") -> HTMLResponse:
    """Without ``confirm``: the confirmation naming the key. With it: revoked."""
    if confirm != "yes":
        key = next((k for k in call(request, caller, "list_keys").keys if k.key_id == key_id), None)
        if key is None or key.revoked_at:
            raise NotFoundError(f"no active key {key_id} in this tenant", id=key_id)
        return render(request, "revoke.html", key=key, own=key_id == caller.key_id)
    call(request, caller, "revoke_key", {"key_id": key_id})
    return _page(request, caller, done=f"Revoked key {key_id}.")


async def _form(request: Request) -> dict[str, str]:
    return {name: str(value) for name, value in (await request.form()).items()}


FormData = Annotated[dict[str, str], Depends(_form)]


@router.post("/ui/part/admin/policy")
@part
def save_policy(request: Request, caller: Authenticated, form: FormData) -> HTMLResponse:
    policy = {
        "multiValuedKinds": [k.strip() for k in str(form.get("multiValuedKinds", "")).split(",") if k.strip()],
        "tombstonePolicy": form.get("tombstonePolicy"),
        "trust": {
            t: {
                o: {"status": form.get(f"{t}.{o}.status"), "weight": _number(form.get(f"{t}.{o}.weight"), t, o)}
                for o in ORIGINS
            }
            for t in TRUST_CLASSES
        },
    }
    call(request, caller, "put_policy", body=policy)
    return _page(request, caller, done="Policy saved.")


def _number(value: Any, trust_class: str, origin: str) -> float:
    try:
        return float(str(value))
    except ValueError:
        raise InvalidInputError(
            f"the weight of {trust_class} / {origin} must be a number from 0 to 1",
            field=f"trust.{trust_class}.{origin}.weight",
        ) from None
