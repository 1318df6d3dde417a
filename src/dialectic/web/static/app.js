// dialectic's page: the debates list, the new-debate form and the live view of a debate.
// Plain JavaScript, no build step. Text from the server is put in the page as text
// (textContent); only the fields the server rendered and sanitised (…Html, html) as HTML.
"use strict";

(() => {
  const $ = (id) => document.getElementById(id);

  function el(tag, props, ...children) {
    const node = document.createElement(tag);
    for (const [key, value] of Object.entries(props || {})) {
      if (value === undefined || value === null || value === false) continue;
      if (key === "class") node.className = value;
      else if (key === "text") node.textContent = value;
      else if (key.startsWith("on")) node.addEventListener(key.slice(2), value);
      else node.setAttribute(key, value === true ? "" : String(value));
    }
    for (const child of children.flat()) {
      if (child === null || child === undefined || child === false) continue;
      node.append(child instanceof Node ? child : document.createTextNode(String(child)));
    }
    return node;
  }

  /** An element holding HTML the server rendered from Markdown and sanitised. */
  function rendered(tag, cls, html) {
    const node = document.createElement(tag);
    node.className = cls;
    node.innerHTML = html || "";
    return node;
  }

  const number = (n) => (n || 0).toLocaleString("en-US");
  const KIND_LABELS = {
    proposal: "Proposal", critique: "Critique", refinement: "Refinement", response: "Turn",
    opening: "Opening statement", rebuttal: "Rebuttal", closing: "Closing statement", summary: "Summary",
    ranking: "Ranking",
  };

  // Times as the dialectic command shows them on the server's machine: in the server's local zone
  // (GET /api/options gives its IANA name, or failing that its offset now), "2025-06-01 14:03:22" in
  // `show`, without the seconds in `list` (dialectic.cli.browse_run). Not the browser's zone: the
  // same debate reads the same in a terminal on the server and on the page.
  let serverZone = null;
  let zoneFormat = null;
  const pad = (n) => String(n).padStart(2, "0");

  function zoneParts(date) {
    if (serverZone && serverZone.name && zoneFormat !== false) {
      try {
        zoneFormat = zoneFormat || new Intl.DateTimeFormat("en-US", {
          timeZone: serverZone.name, hourCycle: "h23",
          year: "numeric", month: "2-digit", day: "2-digit", hour: "2-digit", minute: "2-digit", second: "2-digit",
        });
        const parts = Object.fromEntries(zoneFormat.formatToParts(date).map((p) => [p.type, p.value]));
        return [parts.year, parts.month, parts.day, parts.hour, parts.minute, parts.second];
      } catch (error) {
        zoneFormat = false; // a zone this browser does not know: its offset, below
      }
    }
    const shifted = new Date(date.getTime() + ((serverZone && serverZone.offsetMinutes) || 0) * 60_000);
    return [shifted.getUTCFullYear(), pad(shifted.getUTCMonth() + 1), pad(shifted.getUTCDate()),
      pad(shifted.getUTCHours()), pad(shifted.getUTCMinutes()), pad(shifted.getUTCSeconds())];
  }

  /** "2025-06-01 14:03:22" (or without the seconds) in the server's zone, for an ISO time. */
  function when(iso, seconds = true) {
    const date = iso ? new Date(iso) : null;
    if (!date || Number.isNaN(date.getTime())) return "";
    const [y, mo, d, h, mi, s] = zoneParts(date);
    return `${y}-${mo}-${d} ${h}:${mi}${seconds ? `:${s}` : ""}`;
  }

  function zoneName() {
    if (!serverZone) return "the server's time zone";
    if (serverZone.name && zoneFormat !== false) return serverZone.name;
    const minutes = Math.abs(serverZone.offsetMinutes || 0);
    const sign = (serverZone.offsetMinutes || 0) < 0 ? "-" : "+";
    return `UTC${sign}${pad(Math.floor(minutes / 60))}:${pad(minutes % 60)}`;
  }

  /** A <time> showing `iso` as the command line would; its tooltip names the zone. */
  function timeNode(node, iso, seconds = true) {
    node.dateTime = iso || "";
    node.textContent = when(iso, seconds);
    node.title = `${zoneName()}: the server's time zone, as the dialectic command shows times`;
    return node;
  }

  // titles:begin: a problem's title, its first line without Markdown marks, by the server's rules
  // (dialectic.core.titles; tests/web/test_titles.py runs both on the same lines).
  const LINE_START = /^(?:>\s*)*(?:#{1,6}(?:\s+|$)|[-*+]\s+|\d{1,9}[.)]\s+)?/;
  const CLOSING_HASHES = /\s+#+\s*$/;
  const LINK = /!?\[([^\]]*)\]\([^)]*\)/g;
  const EMPHASIS = /(\*\*|__|~~)(?=\S)(.+?)(?<=\S)\1|(?<![\w*])\*(?=\S)([^*]+?)(?<=\S)\*(?![\w*])/g;
  const CODE = /`+([^`]+)`+/g;

  function withoutMarks(line) {
    let text = line.trim().replace(LINE_START, "");
    if (line.replace(/^[ >]+/, "").startsWith("#")) text = text.replace(CLOSING_HASHES, "");
    text = text.replace(LINK, "$1").replace(CODE, "$1");
    for (let nested = 0; nested < 2; nested += 1) {
      text = text.replace(EMPHASIS, (_m, _mark, strong, em) => (strong !== undefined ? strong : em));
    }
    return text.trim();
  }

  function titleLine(text) {
    return (text || "").split(/\r\n|[\n\r\v\f\x1c-\x1e\x85\u2028\u2029]/).map(withoutMarks).find(Boolean) || "";
  }
  // titles:end

  function cutLine(line, width) {
    const chars = Array.from(line);
    return chars.length <= width ? line : chars.slice(0, width - 1).join("").trimEnd() + "…";
  }

  const TITLE_CHARS = 140; // as the debates list shows a problem (dialectic.web.views.PROBLEM_CHARS)
  const TAB_TITLE_CHARS = 60;

  // ---------------------------------------------------------------- the API

  let signingIn = null;

  async function api(path, options = {}) {
    const init = { method: options.method || "GET", headers: {}, credentials: "same-origin" };
    if (options.json !== undefined) {
      init.body = JSON.stringify(options.json);
      init.headers["Content-Type"] = "application/json";
    }
    const response = await fetch("/api" + path, init);
    if (response.status === 401) {
      await signIn();
      return api(path, options);
    }
    const type = response.headers.get("content-type") || "";
    const body = type.includes("json") ? await response.json() : null;
    if (!response.ok) {
      const error = new Error((body && body.detail) || response.statusText);
      error.status = response.status;
      error.body = body;
      throw error;
    }
    return body;
  }

  function signIn() {
    if (signingIn) return signingIn;
    const dialog = $("sign-in");
    signingIn = new Promise((resolve) => {
      const form = $("sign-in-form");
      form.onsubmit = async (event) => {
        event.preventDefault();
        const response = await fetch("/api/session", {
          method: "POST",
          headers: { "Content-Type": "application/json" },
          body: JSON.stringify({ token: $("token").value }),
          credentials: "same-origin",
        });
        if (response.ok) {
          dialog.close();
          signingIn = null;
          resolve();
        } else {
          showError($("error-token"), "That is not this server's token.");
        }
      };
      dialog.showModal();
      $("token").focus();
    });
    return signingIn;
  }

  function showError(node, message) {
    node.textContent = message || "";
    node.hidden = !message;
  }

  async function loadNotices() {
    try {
      const health = await api("/health");
      $("notices").replaceChildren(...health.notices.map((text) => el("p", { class: "notice", text })));
    } catch (error) {
      $("notices").replaceChildren(el("p", { class: "notice", text: `The server did not answer: ${error.message}` }));
    }
  }

  // ---------------------------------------------------------------- views and routing

  let options = null;
  async function getOptions() {
    if (!options) {
      options = await api("/options");
      serverZone = options.timeZone || null;
      zoneFormat = null;
    }
    return options;
  }

  function show(viewId, title) {
    for (const view of document.querySelectorAll(".view")) view.hidden = view.id !== viewId;
    document.title = title ? `${title} · dialectic` : "dialectic";
  }

  async function route() {
    closeStream();
    const hash = location.hash || "#/";
    const match = hash.match(/^#\/debates\/([^/?#]+)/);
    try {
      if (match) await showDebate(decodeURIComponent(match[1]));
      else if (hash.startsWith("#/new")) await showNewForm();
      else await showList();
    } catch (error) {
      $("notices").replaceChildren(el("p", { class: "notice", role: "alert", text: error.message }));
    }
  }

  // ---------------------------------------------------------------- the debates list

  const list = { cursor: null };

  async function showList() {
    show("view-list", "Debates");
    const opts = await getOptions();
    const select = $("status-filter");
    if (select.options.length === 1) {
      for (const status of opts.statuses) select.append(el("option", { value: status, text: status }));
    }
    await loadList(true);
  }

  async function loadList(reset) {
    const tbody = $("debates").tBodies[0];
    if (reset) {
      list.cursor = null;
      tbody.replaceChildren();
    }
    const query = new URLSearchParams({ limit: "20" });
    if ($("status-filter").value) query.set("status", $("status-filter").value);
    if (list.cursor) query.set("cursor", list.cursor);
    const page = await api(`/debates?${query}`);
    for (const item of page.items) {
      tbody.append(
        el("tr", {},
          el("td", {}, el("span", { class: `badge ${item.status}`, text: item.status })),
          el("td", {}, el("a", { href: `#/debates/${encodeURIComponent(item.id)}`, text: item.problem || item.id })),
          el("td", { class: "num", text: `${item.currentRound} / ${item.rounds ?? "?"}` }),
          el("td", { text: item.agents.join(", ") }),
          el("td", { class: "num" }, timeNode(el("time"), item.createdAt, false)),
          el("td", { class: "num", text: number(item.tokens.total) }),
        ),
      );
    }
    list.cursor = page.nextCursor;
    $("list-more").hidden = !page.nextCursor;
    $("list-empty").hidden = tbody.rows.length > 0;
  }

  // ---------------------------------------------------------------- the new-debate form

  let formChanged = { termination: false };

  // The panel: every allowed endpoint of the server and the models it offers (GET /api/models).
  let panel = null;
  async function getPanel() {
    if (!panel) panel = await api("/models");
    return panel;
  }

  async function showNewForm() {
    show("view-new", "New debate");
    const opts = await getOptions();
    await getPanel();
    const form = $("new-debate");
    if (!form.dataset.ready) {
      fillSelect($("format"), opts.formats, opts.defaults.format);
      fillSelect($("termination-type"), opts.terminations, opts.defaults.termination.type);
      $("termination-threshold").value = opts.defaults.termination.threshold;
      $("rounds").value = opts.defaults.rounds;
      $("rounds").max = opts.limits.maxRounds;
      $("max-answers").value = opts.defaults.maxAnswers;
      $("max-answers").min = opts.answerBudget.min;
      $("max-answers").max = opts.answerBudget.max;
      $("clarify").checked = opts.defaults.clarify;
      fillSelect($("add-role"), opts.roles.map((r) => r.role), null, (role) => opts.roles.find((r) => r.role === role).name);
      $("agent-rows").replaceChildren(...opts.agents.map((agent) => agentRow(agent, opts)));
      $("judge-model-slot").replaceChildren(modelSelect("judge-model", opts.judge, false));
      $("judge-temperature").value = opts.judge.temperature;
      fillSelect($("judge-fallback"), ["auto", "off", ...opts.agents.map((a) => a.id)], opts.judge.fallback,
        (value) => ({ auto: "Any participant (auto)", off: "None: the debate fails" })[value] || opts.agents.find((a) => a.id === value).name);
      const unlisted = panel.endpoints.filter((e) => e.error);
      showError($("panel-note"), unlisted.length ? `Could not list the models of ${unlisted.map((e) => `${e.id} (${e.error})`).join(", ")}: their configured models are offered.` : "");
      form.dataset.ready = "1";
    }
    $("problem").focus();
  }

  function fillSelect(select, values, chosen, label) {
    select.replaceChildren(...values.map((value) => el("option", { value, text: label ? label(value) : value, selected: value === chosen })));
  }

  let rowCount = 0;

  // A model is picked from the endpoints' lists: an option's value is [endpoint id, model] as JSON.
  // A seat a person plays (value "human") has no model: its turns are written in its card on the debate's page.
  function modelSelect(id, chosen, withPerson) {
    const select = el("select", { id });
    for (const endpoint of panel.endpoints) {
      select.append(el("optgroup", { label: endpoint.id },
        endpoint.models.map((model) => el("option", {
          value: JSON.stringify([endpoint.id, model]), text: model,
          selected: chosen.endpoint === endpoint.id && chosen.model === model,
        }))));
    }
    if (withPerson) select.append(el("option", { value: "human", text: "A person (human seat)", selected: chosen.provider === "human" }));
    return select;
  }

  function modelChoice(select) {
    if (select.value === "human") return { provider: "human", model: "person" };
    const [endpoint, model] = JSON.parse(select.value);
    return { endpoint, model };
  }

  function agentRow(agent, opts) {
    const n = rowCount++;
    const row = el("div", { class: "agent-row", "data-id": agent.id || "", "data-role": agent.role });
    row.append(
      el("div", { class: "who" },
        el("input", { type: "checkbox", id: `agent-${n}-on`, checked: true }),
        el("label", { for: `agent-${n}-on`, text: `${agent.name} (${agent.role})` }),
      ),
      el("div", {}, el("label", { for: `agent-${n}-model`, text: "Model" }), modelSelect(`agent-${n}-model`, agent, true)),
      el("div", {}, el("label", { for: `agent-${n}-temperature`, text: "Temperature" }),
        el("input", { type: "number", id: `agent-${n}-temperature`, min: 0, max: 2, step: 0.1, value: agent.temperature })),
    );
    row.dataset.index = String(n);
    return row;
  }

  function chosenAgents() {
    return [...$("agent-rows").children]
      .filter((row) => $(`agent-${row.dataset.index}-on`).checked)
      .map((row) => {
        const n = row.dataset.index;
        const choice = { role: row.dataset.role, ...modelChoice($(`agent-${n}-model`)) };
        if (row.dataset.id) choice.id = row.dataset.id;
        const temperature = $(`agent-${n}-temperature`).value;
        if (temperature !== "") choice.temperature = Number(temperature);
        return choice;
      });
  }

  function chosenJudge() {
    const judge = { ...modelChoice($("judge-model")), fallback: $("judge-fallback").value };
    if ($("judge-temperature").value !== "") judge.temperature = Number($("judge-temperature").value);
    return judge;
  }

  async function submitNewDebate(event) {
    event.preventDefault();
    for (const node of document.querySelectorAll("#new-debate .field-error, #new-debate .form-error")) showError(node, "");
    const body = {
      problem: $("problem").value,
      agents: chosenAgents(),
      judge: chosenJudge(),
      format: $("format").value,
      clarify: $("clarify").checked,
    };
    if ($("rounds").value !== "") body.rounds = Number($("rounds").value);
    if ($("max-answers").value !== "") body.maxAnswers = Number($("max-answers").value);
    if (formChanged.termination) {
      body.termination = { type: $("termination-type").value };
      if ($("termination-threshold").value !== "") body.termination.threshold = Number($("termination-threshold").value);
    }
    const button = event.submitter || $("new-debate").querySelector("button[type=submit]");
    button.disabled = true;
    try {
      const created = await api("/debates", { method: "POST", json: body });
      location.hash = `#/debates/${encodeURIComponent(created.id)}`;
    } catch (error) {
      showFieldErrors(error, "new-debate");
    } finally {
      button.disabled = false;
    }
  }

  function showFieldErrors(error, formId) {
    const fields = (error.body && error.body.fields) || {};
    let first = null;
    for (const [name, message] of Object.entries(fields)) {
      const slot = $(`error-${name.split(/[.[]/)[0]}`);
      if (slot) {
        showError(slot, message);
        first = first || slot;
      }
    }
    if (!first) {
      const slot = $(`error-${formId === "answers-form" ? "answers" : "form"}`);
      showError(slot, error.message);
      first = slot;
    }
    const described = document.querySelector(`[aria-describedby~="${first.id}"]`);
    (described || first).focus?.();
  }

  async function readProblemFile(event) {
    const file = event.target.files[0];
    if (!file) return;
    $("problem").value = await file.text();
  }

  // ---------------------------------------------------------------- the live debate

  let current = null;
  const liveKey = (agent, round, kind, target) => `${agent}|${round ?? ""}|${kind ?? ""}|${target ?? ""}`;

  function closeStream() {
    if (current && current.stream) current.stream.close();
    if (current) current.stream = null;
  }

  async function showDebate(id) {
    show("view-debate", "Debate");
    const debate = current = {
      id, state: null, lastSeq: 0, live: new Map(), warnings: [], note: "", phase: null,
      ended: false, stream: null, dirty: false, answersShown: "", pauseAsked: false,
      rounds: new Map(), chosenOpen: new Map(), watched: false, turnForms: new Map(),
    };
    for (const node of ["debate-rounds", "debate-loose", "debate-warnings", "outcome-facts", "outcome-body"]) $(node).replaceChildren();
    renderHead({ id, problem: "" });
    $("debate-problem-full").open = false;
    $("outcome-pending").hidden = true;
    note("Loading…");
    $("dl-export").href = `/api/debates/${encodeURIComponent(id)}/export`;
    $("dl-report").href = `/api/debates/${encodeURIComponent(id)}/report`;
    // 404 (or the sign-in) before the stream opens; the problem and times titled before the heading takes focus
    const [state] = await Promise.all([api(`/debates/${encodeURIComponent(id)}`), getOptions()]);
    if (current !== debate) return;
    renderHead(state);
    openStream();
    // For screen readers: the new view starts at its heading. It is no control, so no focus ring frames it (style.css).
    $("debate-title").focus();
  }

  /** The problem as the page's heading and the tab's title; the id and times below it. */
  function renderHead(s) {
    const line = titleLine(s.problem);
    const title = line ? cutLine(line, TITLE_CHARS) : `Debate ${s.id}`;
    if ($("debate-title").textContent !== title) $("debate-title").textContent = title;
    document.title = `${line ? cutLine(line, TAB_TITLE_CHARS) : `Debate ${s.id}`} · dialectic`;
    $("debate-id").textContent = s.id;
    timeNode($("debate-created"), s.createdAt);
    timeNode($("debate-updated"), s.updatedAt);
    const whole = (s.problem || "").trim();
    $("debate-problem-full").hidden = !whole || whole === title;
    $("debate-problem").textContent = s.problem || "";
  }

  const CHANGE_KINDS = [
    "debate_created", "status_changed", "round_started", "contribution_recorded", "summary_recorded",
    "judge_summary_recorded", "questions_asked", "answers_recorded", "evaluation_recorded", "solution_recorded",
    "participant_dropped", "participants_reinstated", "work_discarded", "personas_assigned", "assessment_recorded",
    "consensus_challenged", "debate_stopped_early", "vote_recorded", "council_counted", "correction_decided", "verdict_recorded", "window_noted",
    "windows_sized", "cursor_moved", "call_recorded", "budget_changed", "turn_awaited", "turn_answered",
  ];
  const LIVE_HANDLERS = {
    agent_started: onAgentStarted, token: onToken, agent_completed: onAgentCompleted,
    phase_started: (e) => { current.phase = e; schedule(); },
    phase_completed: () => {},
    warning: (e) => { current.warnings.push(e.message); schedule(); },
    retrying: (e) => note(`${e.agentName} is retrying ${e.activity} (attempt ${e.attempt}): ${e.error}`),
    synthesis_started: () => note("The judge is writing the solution…"),
    debate_started: (e) => note(e.resumed ? "Resumed." : "Started."),
    pausing: (e) => {
      current.pauseAsked = false; // the pause has taken effect: it can no longer be taken back
      note(`Pausing: waiting for ${e.inFlight} call(s) in flight to finish…`);
      schedule();
    },
  };

  function openStream() {
    const debate = current;
    const query = debate.lastSeq ? `?after=${debate.lastSeq}` : "";
    const stream = new EventSource(`/api/debates/${encodeURIComponent(debate.id)}/events${query}`);
    debate.stream = stream;
    debate.ended = false;
    for (const kind of CHANGE_KINDS) {
      stream.addEventListener(kind, (message) => {
        if (current !== debate) return;
        const change = JSON.parse(message.data);
        if (change.seq <= debate.lastSeq) return; // already applied: never twice
        debate.lastSeq = change.seq;
        applyChange(debate, change);
        schedule();
      });
    }
    for (const [name, handle] of Object.entries(LIVE_HANDLERS)) {
      stream.addEventListener(name, (message) => {
        if (current === debate) handle(JSON.parse(message.data));
      });
    }
    stream.addEventListener("end", () => {
      stream.close();
      if (current !== debate) return;
      debate.ended = true;
      debate.stream = null;
      debate.live.clear(); // calls that never became a saved contribution (discarded work) go with the run
      note("");
      schedule();
    });
    stream.onerror = () => {
      if (current === debate && !debate.ended) note("Connection lost; reconnecting…");
    };
    stream.onopen = () => {
      if (current === debate && ["Loading…", "Connection lost; reconnecting…"].includes(debate.note)) note("");
    };
  }

  function note(text) {
    current.note = text;
    $("debate-live").textContent = text;
  }

  // -- the stored changes, applied as the store applies them (dialectic.core.changes.apply_change)

  function roundAt(state, n, at) {
    let found = state.rounds.find((r) => r.roundNumber === n);
    if (!found) {
      found = { roundNumber: n, contributions: [], summaries: {}, timestamp: at };
      state.rounds.push(found);
      state.rounds.sort((a, b) => a.roundNumber - b.roundNumber);
    }
    return found;
  }

  function applyChange(debate, c) {
    if (c.kind === "debate_created") {
      debate.state = c.state;
      return;
    }
    const s = debate.state;
    if (!s) return;
    switch (c.kind) {
      case "status_changed": s.status = c.status; s.error = c.error; break;
      case "round_started": {
        const r = roundAt(s, c.roundNumber, c.at);
        if (c.phase) r.phase = c.phase;
        s.currentRound = Math.max(s.currentRound || 0, c.roundNumber);
        break;
      }
      case "contribution_recorded": {
        const x = c.contribution;
        roundAt(s, c.roundNumber, c.at).contributions.push(x);
        debate.live.delete(liveKey(x.agentId, c.roundNumber, x.type, x.targetAgentId));
        break;
      }
      case "summary_recorded":
        roundAt(s, c.roundNumber, c.at).summaries[c.summary.agentId] = c.summary;
        debate.live.delete(liveKey(c.summary.agentId, c.roundNumber, "summary", null));
        break;
      case "judge_summary_recorded": s.judgeSummary = c.summary; break;
      case "questions_asked":
        for (const group of c.groups) {
          const existing = s.clarifications.find((g) => g.agentId === group.agentId);
          if (existing) existing.items.push(...group.items);
          else s.clarifications.push(group);
        }
        s.clarificationIterations = Math.max(s.clarificationIterations || 0, c.iteration);
        break;
      case "answers_recorded":
        for (const group of s.clarifications) for (const item of group.items) {
          if (item.id in c.answers) item.answer = c.answers[item.id];
        }
        break;
      case "evaluation_recorded": roundAt(s, c.roundNumber, c.at).evaluation = c.evaluation; break;
      case "solution_recorded": s.finalSolution = c.solution; break;
      case "participant_dropped":
        if (!s.dropped.some((d) => d.agentId === c.dropped.agentId)) s.dropped.push(c.dropped);
        break;
      case "participants_reinstated": s.dropped = s.dropped.filter((d) => !c.agentIds.includes(d.agentId)); break;
      case "work_discarded": s.discarded.push(c.discarded); break;
      case "personas_assigned":
        for (const stance of c.stances) {
          const agent = s.agents.find((a) => a.id === stance.agentId);
          if (agent) Object.assign(agent, { position: stance.position, persona: stance.persona });
        }
        s.personasAssigned = true;
        break;
      case "assessment_recorded": roundAt(s, c.assessment.roundNumber, c.at).assessment = c.assessment; break;
      case "consensus_challenged": roundAt(s, c.guard.roundNumber, c.at).guard = c.guard; break;
      case "debate_stopped_early": s.stoppedEarly = c.stop; break;
      case "vote_recorded": s.vote = c.outcome; break;
      case "council_counted": s.council = c.outcome; break;
      case "correction_decided": s.correction = c.outcome; break;
      case "verdict_recorded": s.verdict = c.verdict; break;
      case "window_noted": (s.windows = s.windows || {})[c.use.agentId] = c.use; break;
      case "windows_sized": break; // the saved configuration's contextWindow: nothing the page shows
      case "cursor_moved": s.nextNode = c.nextNode || null; break;
      case "call_recorded": (s.ledger = s.ledger || []).push(c.entry); break;
      case "budget_changed": break; // the saved configuration's limits: nothing the page shows
      case "turn_awaited":
        s.humanTurns = (s.humanTurns || []).filter((t) => t.key !== c.turn.key);
        s.humanTurns.push(c.turn);
        break;
      case "turn_answered": {
        const turn = (s.humanTurns || []).find((t) => t.key === c.key);
        if (turn) Object.assign(turn, { text: c.text, playedBy: c.playedBy, answeredAt: c.at });
        break;
      }
      default: break;
    }
    s.updatedAt = c.at;
  }

  // -- live calls: a card block per call, its text written at each piece's offset

  function onAgentStarted(e) {
    current.watched = true;
    const key = liveKey(e.agentId, e.roundNumber, e.kind, e.targetId);
    current.live.set(key, { ...e, text: "", done: false, node: null });
    schedule();
  }

  function onToken(e) {
    const key = liveKey(e.agentId, e.roundNumber, e.kind, e.targetId);
    let entry = current.live.get(key);
    current.watched = true;
    if (!entry) {
      entry = { ...e, agentName: e.agentName || e.agentId, activity: e.kind, text: "", done: false, node: null };
      current.live.set(key, entry);
    }
    entry.text = entry.text.slice(0, e.offset) + e.text;
    if (entry.node) entry.node.querySelector(".body").textContent = entry.text;
    else schedule();
  }

  function onAgentCompleted(e) {
    const key = liveKey(e.agentId, e.roundNumber, e.kind, e.targetId);
    const entry = current.live.get(key);
    if (!entry) return;
    entry.done = true;
    if (!entry.text || !e.ok) current.live.delete(key);
    schedule();
  }

  // -- rendering, at most once a frame

  function schedule() {
    if (!current || current.dirty) return;
    current.dirty = true;
    requestAnimationFrame(() => {
      if (!current) return;
      current.dirty = false;
      renderDebate(current);
    });
  }

  // -- usage: the ledger's calls, tokens and cost, counted and written as the command line and the
  // report count and write them (dialectic.core.ledger: ledger_totals, cost_text, usd)

  /** The debate's ledger; for one saved before there was a ledger, the one its saved metadata gives (entries_of). */
  function ledgerOf(s) {
    if ((s.ledger && s.ledger.length) || !hasCallMetadata(s)) return s.ledger || [];
    const entries = [];
    const summary = (m) => {
      const unsplit = m.inputTokens == null && m.outputTokens == null; // a bare total is counted as input
      entries.push({ inputTokens: (unsplit ? m.tokensUsed : m.inputTokens) || 0, outputTokens: m.outputTokens || 0, status: "ok" });
    };
    for (const r of s.rounds) {
      for (const x of Object.values(r.summaries || {})) summary(x.metadata || {});
      for (const c of r.contributions) {
        const m = c.metadata || {};
        if (!m.carriedOver) entries.push({ inputTokens: m.inputTokens || 0, outputTokens: m.outputTokens || 0, status: c.status === "failed" ? "failed" : "ok" });
      }
    }
    if (s.judgeSummary) summary(s.judgeSummary.metadata || {});
    if (s.finalSolution) {
      const m = s.finalSolution.metadata || {};
      entries.push({ inputTokens: m.inputTokens || 0, outputTokens: m.outputTokens || 0, status: "ok" });
    }
    return entries;
  }

  function hasCallMetadata(s) {
    return s.rounds.some((r) => r.contributions.some((c) => {
      const m = c.metadata || {};
      return !m.carriedOver && (m.latencyMs != null || m.tokensUsed != null);
    }));
  }

  function ledgerTotals(entries) {
    const t = { calls: 0, input: 0, output: 0, cached: 0, cost: 0, unpriced: 0, failed: 0, discarded: 0 };
    for (const e of entries) {
      t.calls += 1;
      t.input += e.inputTokens || 0;
      t.output += e.outputTokens || 0;
      t.cached += e.cachedInputTokens || 0;
      if (e.costUsd === undefined || e.costUsd === null) t.unpriced += 1;
      else t.cost += e.costUsd;
      if ((e.status || "ok") !== "ok") t.failed += 1;
      if (e.discarded) t.discarded += 1;
    }
    return t;
  }

  function usd(amount) {
    if (amount === 0) return "$0.00";
    if (amount < 0.01) return "$" + amount.toFixed(6).replace(/0+$/, "");
    if (amount < 1) {
      const digits = amount.toFixed(4).replace(/0+$/, "");
      return "$" + ((digits.split(".")[1] || "").length >= 2 ? digits : amount.toFixed(2));
    }
    return "$" + amount.toLocaleString("en-US", { minimumFractionDigits: 2, maximumFractionDigits: 2 });
  }

  function costText(t) {
    if (t.unpriced === 0) return usd(t.cost);
    if (t.unpriced === t.calls) return "unknown";
    return `${usd(t.cost)} + unknown (${t.unpriced} calls on models without a price)`;
  }

  function tokensText(t) {
    return `${number(t.input + t.output)} (${number(t.input)} input · ${number(t.output)} output${t.cached ? ` · ${number(t.cached)} cached` : ""})`;
  }

  /** The share of prompt tokens the providers read from their prompt caches (ledger.prompt_cache_text). */
  function promptCacheText(t) {
    if (!t.cached || !t.input) return null;
    return `prompt tokens served from cache: ${Math.round((100 * Math.min(t.cached, t.input)) / t.input)}%`;
  }

  function callsText(t) {
    const extras = [];
    if (t.failed) extras.push(`${t.failed} failed`);
    if (t.discarded) extras.push(`${t.discarded} discarded`);
    return number(t.calls) + (extras.length ? ` (${extras.join(", ")})` : "");
  }

  function shownStatus(debate) {
    const status = debate.state.status;
    return status === "running" && debate.ended ? "stale" : status;
  }

  function renderDebate(debate) {
    const s = debate.state;
    if (!s) return;
    const status = shownStatus(debate);
    renderHead(s);
    const badge = $("debate-status");
    badge.textContent = status;
    badge.className = `badge ${status}`;
    const total = (s.config && s.config.debate && s.config.debate.rounds) || "?";
    const phase = debate.phase && !debate.ended ? ` · ${debate.phase.phase}` : s.nextNode ? ` · next: ${s.nextNode}` : "";
    const progress = `round ${s.currentRound} of ${total}${phase}`;
    $("debate-progress").textContent = progress;
    $("debate-format").textContent = (s.config && s.config.debate && s.config.debate.format) || "critique-refine";
    renderControls(debate, status);
    $("debate-warnings").replaceChildren(...debate.warnings.map((text) => el("li", { text })));
    renderQuestions(debate);
    renderOutcome(debate, status, progress);
    renderStances(s);
    renderRounds(debate, status);
  }

  /** Where the debate stands while it has no outcome yet; "" once it is completed. */
  function pendingText(s, status, progress) {
    switch (status) {
      case "completed": return "";
      case "pending": return "Not started yet.";
      case "running": return `Running: ${progress}. The outcome appears here when the debate ends.`;
      case "suspended": {
        const turns = pendingTurns(s);
        if (!turns.length) return "Waiting for the answers to the clarifying questions above.";
        const names = [...new Set(turns.map((t) => t.agentName))].join(", ");
        return `Waiting for ${names} to write ${turns.length === 1 ? "a turn" : `${turns.length} turns`}: the form is in the seat's card below.`;
      }
      case "paused": return `Paused at ${progress}. Resume it to reach an outcome.`;
      case "failed": return `Failed at ${progress}${s.error ? `: ${s.error}` : "."} Retry to go on from there.`;
      case "interrupted": return `Interrupted at ${progress}${s.error ? `: ${s.error}` : "."} Resume it to go on.`;
      case "stale": return `Saved as running at ${progress}, but no process runs it any more. Resume it to go on.`;
      default: return `${status}: ${progress}.`;
    }
  }

  function renderControls(debate, status) {
    const live = !debate.ended && status === "running";
    $("btn-pause").hidden = !live || debate.pauseAsked;
    $("btn-cancel").hidden = !live;
    // While a pause asked for has not taken effect, Resume takes it back.
    $("btn-resume").hidden = live ? !debate.pauseAsked : !["paused", "interrupted", "stale"].includes(status);
    $("btn-retry").hidden = live || status !== "failed";
  }

  /** The human seats' turns the debate waits for (their text not written yet). */
  function pendingTurns(s) {
    return (s.humanTurns || []).filter((t) => t.text === undefined || t.text === null);
  }

  /** A human seat's turn as a form in its card: what the seat is shown, and the text to send. The node is
   * kept while the turn waits, so what the person typed survives the page's redrawing. */
  function turnForm(debate, turn) {
    let form = debate.turnForms.get(turn.key);
    if (form) return form;
    const id = `turn-${turn.key.replace(/[^A-Za-z0-9_-]/g, "-")}`;
    const error = el("p", { id: `${id}-error`, class: "field-error", role: "alert", hidden: true });
    const text = el("textarea", { id: `${id}-text`, name: "text", rows: 8, "aria-describedby": `${id}-error` });
    const deadline = turn.deadlineMs ? new Date(Date.parse(turn.askedAt) + turn.deadlineMs) : null;
    form = el("form", { class: "turn-form", "data-turn": turn.key, "aria-label": `${turn.agentName}'s turn` },
      el("h4", { text: `Your turn: ${turn.activity}` }),
      el("details", {}, el("summary", { text: "What the seat is shown" }),
        turn.messages.map((m) => el("pre", { class: `prompt ${m.role}`, text: m.content }))),
      deadline ? el("p", { class: "meta", text: `Deadline ${deadline.toLocaleString()}: then the fallback model plays the turn.` }) : null,
      el("label", { for: `${id}-text`, text: "The turn" }),
      text,
      error,
      el("button", { type: "submit", class: "primary", text: "Send the turn" }),
    );
    form.addEventListener("submit", async (event) => {
      event.preventDefault();
      showError(error, "");
      if (!text.value.trim()) {
        showError(error, "Write the turn first.");
        text.focus();
        return;
      }
      try {
        await api(`/debates/${encodeURIComponent(debate.id)}/turns/${encodeURIComponent(turn.key)}`, { method: "POST", json: { text: text.value } });
      } catch (failure) {
        showError(error, failure.message);
        return;
      }
      debate.turnForms.delete(turn.key);
      if (current === debate) {
        closeStream();
        debate.state.status = "running";
        openStream();
        schedule();
      }
    });
    debate.turnForms.set(turn.key, form);
    return form;
  }

  function pendingQuestions(s) {
    return s.clarifications.flatMap((g) => g.items.filter((i) => i.answer === undefined || i.answer === null).map((i) => ({ group: g, item: i })));
  }

  function renderQuestions(debate) {
    const s = debate.state;
    const pending = s.status === "suspended" ? pendingQuestions(s) : [];
    const ids = pending.map((p) => p.item.id).join(",");
    $("questions").hidden = pending.length === 0;
    if (ids !== debate.answersShown) {
      debate.answersShown = ids;
      $("question-fields").replaceChildren(
        ...pending.map(({ group, item }) =>
          el("div", { class: "field" },
            el("label", { for: `answer-${item.id}`, text: `${item.id} · ${group.agentName}: ${item.question}` }),
            el("textarea", { id: `answer-${item.id}`, name: item.id, rows: 2, "data-question": item.id }),
          ),
        ),
      );
    }
    const answered = s.clarifications.flatMap((g) => g.items.filter((i) => i.answer !== undefined && i.answer !== null).map((i) => ({ g, i })));
    $("answered").hidden = answered.length === 0;
    $("answered-list").replaceChildren(...answered.flatMap(({ g, i }) => [
      el("dt", { text: `${g.agentName}: ${i.question}` }), el("dd", { text: i.answer }),
    ]));
  }

  function renderStances(s) {
    const stances = s.agents.filter((a) => a.position || a.persona);
    $("stances").hidden = stances.length === 0;
    $("stance-list").replaceChildren(...stances.map((a) => el("li", {},
      el("strong", { text: a.name }), a.position ? ` argues: ${a.position}` : "", a.persona ? ` (${a.persona})` : "")));
  }

  function agentName(s, id) {
    const agent = s.agents.find((a) => a.id === id) || (s.judge && s.judge.id === id ? s.judge : null);
    return agent ? agent.name : id;
  }

  // Each round is a <details> the page keeps while the debate is shown (so a reader's focus and choice
  // stay put); its contents are redrawn. Folded by default once the debate is completed (the outcome
  // is on top), except the last round of one watched as it ran; otherwise the latest round is open.
  // A round the reader opened or folded stays so.
  function renderRounds(debate, status) {
    const s = debate.state;
    const numbers = new Set(s.rounds.map((r) => r.roundNumber));
    for (const entry of debate.live.values()) if (entry.roundNumber) numbers.add(entry.roundNumber);
    const waiting = status === "suspended" ? pendingTurns(s) : [];
    for (const turn of waiting) if (turn.roundNumber) numbers.add(turn.roundNumber);
    const sorted = [...numbers].sort((a, b) => a - b);
    const latest = sorted[sorted.length - 1];
    const container = $("debate-rounds");
    sorted.forEach((n, index) => {
      const round = s.rounds.find((r) => r.roundNumber === n) || { roundNumber: n, contributions: [], summaries: {} };
      const node = roundNode(debate, n);
      fillRound(debate, round, node);
      const open = debate.chosenOpen.has(n) ? debate.chosenOpen.get(n) : n === latest && (status !== "completed" || debate.watched);
      node.wanted = open;
      if (node.details.open !== open) node.details.open = open;
      // moved only when out of place: a node taken out of the page loses the focus it had
      if (container.children[index] !== node.details) container.insertBefore(node.details, container.children[index] || null);
    });
    for (const [n, node] of debate.rounds) {
      if (!numbers.has(n)) {
        node.details.remove();
        debate.rounds.delete(n);
      }
    }
    const loose = [...debate.live.values()].filter((e) => !e.roundNumber);
    const looseTurns = waiting.filter((t) => !t.roundNumber);
    $("debate-loose").replaceChildren(...(loose.length || looseTurns.length ? [
      el("section", { class: "round", "aria-label": "Other calls in flight" },
        el("h2", { text: "In progress" }), el("div", { class: "cards" }, loose.map((e) => el("article", { class: "card" },
          el("h3", { text: agentName(s, e.agentId) }), liveBlock(s, e))), looseTurns.map((t) => el("article", { class: "card" },
          el("h3", { text: t.agentName }), turnForm(debate, t))))),
    ] : []));
    restoreFocus(debate);
  }

  function roundNode(debate, n) {
    let node = debate.rounds.get(n);
    if (node) return node;
    const title = el("h2", { id: `round-${n}-title`, class: "round-title" });
    const counts = el("span", { class: "round-counts" });
    const body = el("div", { class: "round-body" });
    const details = el("details", { class: "round", "data-round": n }, el("summary", {}, title, counts), body);
    node = { details, title, counts, body, wanted: null };
    // The reader's choice is kept from then on: a click on the summary (the keyboard's too), or any
    // other toggle the page did not ask for (find in page opens a folded round that holds a match).
    details.firstChild.addEventListener("click", () => debate.chosenOpen.set(n, !details.open));
    details.addEventListener("toggle", () => {
      if (details.open !== node.wanted) debate.chosenOpen.set(n, details.open);
    });
    debate.rounds.set(n, node);
    return node;
  }

  const plural = (count, word) => `${count} ${word}${count === 1 ? "" : "s"}`;

  /** The round's summary line: what it holds by kind, as `dialectic show` counts it, and what is under way. */
  function roundCounts(debate, round) {
    const kinds = [];
    for (const c of round.contributions) if (c.status !== "failed" && !kinds.includes(c.type)) kinds.push(c.type);
    const parts = kinds.map((kind) => plural(round.contributions.filter((c) => c.type === kind && c.status !== "failed").length,
      (KIND_LABELS[kind] || kind).toLowerCase()));
    const failed = round.contributions.filter((c) => c.status === "failed").length;
    if (failed) parts.push(`${failed} failed`);
    const live = [...debate.live.values()].filter((e) => e.roundNumber === round.roundNumber).length;
    if (live) parts.push(`${live} under way`);
    if (round.evaluation) parts.push(`judge's confidence ${round.evaluation.confidence}%`);
    if (round.assessment) parts.push(`quality ${Number(round.assessment.quality).toFixed(1)} / 10`);
    return parts.join(" · ") || "nothing yet";
  }

  // How much of its context window a participant's prompts took (dialectic.reporting.windows says it the same way).
  const WINDOW_VERBS = { summarize: "summarized", slide: "slid", fail: "failed on" };
  function windowText(use) {
    if (!use || !use.largestPrompt) return null;
    const how = use.countedBy === "tokenizer" ? "counted" : "estimated";
    const size = use.window
      ? `${number(use.largestPrompt)} of ${number(use.window)} tokens (${Math.round((use.largestPrompt / use.window) * 100)}%, ${how})`
      : `${number(use.largestPrompt)} tokens (${how}; window unknown)`;
    const done = Object.entries(use.fired || {}).map(([strategy, count]) => `${WINDOW_VERBS[strategy] || strategy} ${count}×`);
    if (use.refusals) done.push(`${use.refusals} refusal${use.refusals === 1 ? "" : "s"}`);
    if (use.overSent) done.push(`${use.overSent} sent over 90%`);
    return `Context window: largest prompt ${size}${done.length ? ` · ${done.join(", ")}` : ""}`;
  }

  function windowBlock(s, agentId) {
    const text = windowText((s.windows || {})[agentId]);
    return text ? el("p", { class: "meta window", text }) : null;
  }

  function lastRoundOf(s, agentId) {
    const rounds = s.rounds.filter((r) => r.contributions.some((c) => c.agentId === agentId)).map((r) => r.roundNumber);
    return rounds.length ? Math.max(...rounds) : null;
  }

  // A redraw moves a turn's form to its new card: the field being typed in gets its focus and caret back.
  function keepFocus(debate) {
    const active = document.activeElement;
    if (active && active.closest && active.closest(".turn-form")) {
      debate.focused = { node: active, start: active.selectionStart, end: active.selectionEnd };
    }
  }

  function restoreFocus(debate) {
    const kept = debate.focused;
    debate.focused = null;
    if (!kept || !kept.node.isConnected || document.activeElement === kept.node) return;
    kept.node.focus();
    if (kept.start !== undefined && kept.start !== null) kept.node.setSelectionRange(kept.start, kept.end);
  }

  function fillRound(debate, round, node) {
    const s = debate.state;
    const dropped = new Set(s.dropped.map((d) => d.agentId));
    const waiting = s.status === "suspended" ? pendingTurns(s).filter((t) => t.roundNumber === round.roundNumber) : [];
    keepFocus(debate);
    const heading = `Round ${round.roundNumber}${round.phase ? ` · ${round.phase}` : ""}`;
    const cards = s.agents.map((agent) => {
      const mine = round.contributions.filter((c) => c.agentId === agent.id);
      const live = [...debate.live.values()].filter((e) => e.agentId === agent.id && e.roundNumber === round.roundNumber);
      const summary = round.summaries && round.summaries[agent.id];
      const turns = waiting.filter((t) => t.agentId === agent.id);
      if (!mine.length && !live.length && !summary && !turns.length) return null;
      return el("article", { class: `card${dropped.has(agent.id) ? " dropped" : ""}`, "aria-label": `${agent.name}, round ${round.roundNumber}` },
        el("div", { class: "card-head" }, el("h3", { text: agent.name }), el("span", { class: "role", text: agent.role })),
        summary ? el("details", {}, el("summary", { text: "Its summary of the debate so far" }), rendered("div", "body", summary.summaryHtml)) : null,
        mine.map((c) => contributionBlock(s, c)),
        live.map((e) => liveBlock(s, e)),
        turns.map((t) => turnForm(debate, t)),
        lastRoundOf(s, agent.id) === round.roundNumber ? windowBlock(s, agent.id) : null,
        dropped.has(agent.id) ? el("p", { class: "meta", text: "Dropped from the debate." }) : null,
      );
    }).filter(Boolean);
    if (node.title.textContent !== heading) node.title.textContent = heading;
    const counts = roundCounts(debate, round);
    if (node.counts.textContent !== counts) node.counts.textContent = counts;
    node.body.replaceChildren(...[el("div", { class: "cards" }, cards), judgeBlock(s, round)].filter(Boolean));
  }

  function kindHeading(s, kind, target) {
    const label = KIND_LABELS[kind] || kind || "Call";
    return target ? `${label} → ${agentName(s, target)}` : label;
  }

  function contributionBlock(s, c) {
    const m = c.metadata || {};
    const facts = [];
    if (m.playedBy === "person") facts.push("written by a person");
    if (m.playedBy === "fallback") facts.push("played by the fallback model: the deadline passed");
    if (m.carriedOver) facts.push("carried over from the last refinement");
    if (m.tokensUsed) facts.push(`${number(m.tokensUsed)} tokens`);
    if (m.latencyMs && m.playedBy !== "person") facts.push(`${number(m.latencyMs)} ms`);
    if (m.model && m.playedBy !== "person") facts.push(m.model);
    if (m.truncated) facts.push("cut off by the token limit");
    if (m.attempts > 1) facts.push(`${m.attempts} attempts`);
    const failed = c.status === "failed";
    return el("section", { class: `contribution${failed ? " failed" : ""}`, "data-kind": c.type },
      el("h4", { text: kindHeading(s, c.type, c.targetAgentId) + (failed ? " (failed)" : "") }),
      failed ? el("p", { class: "error", text: c.error || "failed" }) : rendered("div", "body", c.contentHtml),
      facts.length ? el("p", { class: "meta", text: facts.join(" · ") }) : null,
      toolCallList(c.toolCalls),
    );
  }

  // What a speaker read with tools: one line per call (name, arguments, result size, latency, error), as text.
  function toolCallList(calls) {
    if (!calls || !calls.length) return null;
    return el("details", { class: "tool-calls" },
      el("summary", { text: `${calls.length} tool call${calls.length === 1 ? "" : "s"}` }),
      el("ul", {}, calls.map((t) => {
        const args = Object.entries(t.arguments || {}).map(([k, v]) => `${k}=${JSON.stringify(v)}`).join(", ");
        const outcome = t.error ? `error: ${t.error}` : `${number(t.resultChars || 0)} chars`;
        return el("li", { class: t.error ? "error" : null, text: `${t.name}(${args}) → ${outcome}, ${number(t.latencyMs || 0)} ms` });
      })));
  }

  function liveBlock(s, entry) {
    if (!entry.node) {
      entry.node = el("section", { class: "contribution streaming", "aria-busy": "true" },
        el("h4", { text: kindHeading(s, entry.kind, entry.targetId) }),
        el("div", { class: "body" }),
      );
    }
    entry.node.querySelector(".body").textContent = entry.text || entry.activity || "";
    return entry.node;
  }

  function judgeBlock(s, round) {
    const parts = [];
    if (round.evaluation) {
      parts.push(el("p", {}, el("strong", { text: `Judge's confidence: ${round.evaluation.confidence}%` }),
        round.evaluation.reasoning ? ` — ${round.evaluation.reasoning}` : ""));
    }
    const a = round.assessment;
    if (a) {
      const flags = a.flags || {};
      parts.push(
        el("p", {}, el("strong", { text: `Round quality ${Number(a.quality).toFixed(1)} / 10` }), ` (${a.qualityTrend})`,
          a.similarity !== undefined ? ` · similarity ${(a.similarity * 100).toFixed(0)}%` : "",
          ` · ${a.shouldContinue ? "the debate goes on" : "the judge would stop here"}`, a.reason ? `: ${a.reason}` : ""),
        el("ul", { class: "flags", "aria-label": "Flags" }, Object.entries(flags).map(([name, on]) =>
          el("li", { class: on ? "on" : "", text: `${name.replace(/([A-Z])/g, " $1").toLowerCase()}: ${on ? "yes" : "no"}` }))),
      );
      if (a.participants && a.participants.length) {
        parts.push(el("div", { class: "table-wrap" }, el("table", {},
          el("caption", { class: "visually-hidden", text: `Scores of round ${round.roundNumber}` }),
          el("thead", {}, el("tr", {}, el("th", { scope: "col", text: "Participant" }), el("th", { scope: "col", text: "Score" }),
            el("th", { scope: "col", text: "Strengths" }), el("th", { scope: "col", text: "Weaknesses" }))),
          el("tbody", {}, a.participants.map((p) => el("tr", {},
            el("th", { scope: "row", text: agentName(s, p.agentId) }), el("td", { text: Number(p.score).toFixed(1) }),
            el("td", { text: (p.strengths || []).join("; ") }), el("td", { text: (p.weaknesses || []).join("; ") })))),
        )));
      }
    }
    if (!parts.length) return null;
    return el("aside", { class: "judge", "aria-label": `The judge on round ${round.roundNumber}` }, el("h3", { text: "The judge" }), parts);
  }

  function listOf(title, htmlItems) {
    if (!htmlItems || !htmlItems.length) return null;
    return el("div", {}, el("h4", { text: title }), el("ul", {}, htmlItems.map((html) => rendered("li", "", html))));
  }

  function tallyText(s, v) {
    return Object.entries(v.tally || {}).sort((a, b) => b[1] - a[1]).map(([id, votes]) => `${agentName(s, id)} ${votes}`).join(" · ");
  }

  function voteResult(s, v) {
    if (v.winnerId) return `${agentName(s, v.winnerId)} won${v.consensus ? " with consensus" : " without consensus"}`;
    return v.tie ? "A tie" : "No winner";
  }

  // The council (format: council): Borda points best first, what the chair was given, each ranker's order.
  function standingsText(s, c) {
    return (c.standings || []).map((x) => `${agentName(s, x.agentId)} ${x.points}`).join(" · ");
  }

  function councilSection(s, c) {
    const chosen = new Set(c.chosen || []);
    return el("section", { class: "council", "aria-label": "The council" }, el("h3", { text: "The council (Borda count)" }),
      el("div", { class: "table-wrap" }, el("table", {},
        el("caption", { class: "visually-hidden", text: "Borda points per answer, best first" }),
        el("thead", {}, el("tr", {}, el("th", { scope: "col", text: "Answer of" }), el("th", { scope: "col", text: "Points" }),
          el("th", { scope: "col", text: "Given to the chair" }))),
        el("tbody", {}, (c.standings || []).map((x) => el("tr", {},
          el("th", { scope: "row", text: agentName(s, x.agentId) }), el("td", { text: String(x.points) }),
          el("td", { text: chosen.has(x.agentId) ? "yes" : "no" })))))),
      el("p", { text: `The chair was given ${(c.chosen || []).map((id) => agentName(s, id)).join(", ")}, best first.` }),
      el("ul", { class: "rankings", "aria-label": "Each ranking" }, (c.rankings || []).map((r) => el("li", {
        text: (r.order || []).length
          ? `${agentName(s, r.rankerId)} ranked ${r.order.map((id) => agentName(s, id)).join(" > ")}`
          : `${agentName(s, r.rankerId)}'s ranking named no answer`,
      }))));
  }

  // The correction-biased critique (format: correction): each check's verdict, the points, the winner.
  function correctionResult(s, c) {
    if (!c.winner) return "no answer was stated";
    const holder = c.winnerId ? agentName(s, c.winnerId) : null; // on a design the winner is already a name
    return `${c.winner} won${holder && !c.winner.startsWith(holder) ? ` (${holder})` : ""} · ${c.points[c.winner]} points`;
  }

  function correctionSection(s, c) {
    return el("section", { class: "correction", "aria-label": "The correction-biased critique" },
      el("h3", { text: "The correction-biased critique" }),
      el("ul", { class: "checks", "aria-label": "The checks" }, (c.checks || []).map((x) => el("li", {
        class: x.corrects ? "corrects" : "holds",
        text: `${agentName(s, x.criticId)} → ${agentName(s, x.targetId)}: ` + (x.corrects
          ? `corrects — violation: ${x.violation || ""}; evidence: “${x.evidence || ""}”`
          : "holds"),
      }))),
      el("div", { class: "table-wrap" }, el("table", {},
        el("caption", { class: "visually-hidden", text: "Points over the whole trajectory" }),
        el("thead", {}, el("tr", {}, el("th", { scope: "col", text: "Answer" }), el("th", { scope: "col", text: "Points" }))),
        el("tbody", {}, Object.entries(c.points || {}).map(([answer, points]) => el("tr", { class: answer === c.winner ? "winner" : null },
          el("th", { scope: "row", text: answer }), el("td", { text: String(points) })))))),
      el("p", { text: c.winner ? `Winner: ${correctionResult(s, c)}.` : "No answer was stated: the judge synthesized the solution." }));
  }

  /** At the top of the debate: its usage and, once there is one, its result (solution, verdict, vote);
   * while it has none, where it stands. */
  function renderOutcome(debate, status, progress) {
    const s = debate.state;
    const pending = pendingText(s, status, progress);
    $("outcome-pending").textContent = pending;
    $("outcome-pending").hidden = !pending;
    const totals = ledgerTotals(ledgerOf(s));
    const fact = (label, value, id) => el("div", {}, el("dt", { text: label }), el("dd", { id, text: value }));
    const facts = [
      fact("Cost", costText(totals), "debate-cost"),
      fact("Tokens", tokensText(totals), "debate-tokens"),
      fact("Calls", callsText(totals), "debate-calls"),
    ];
    const promptCache = promptCacheText(totals);
    if (promptCache) facts.push(fact("Prompt cache", promptCache, "debate-prompt-cache"));
    if (s.finalSolution) {
      const withheld = s.finalSolution.confidenceWithheld;
      facts.push(fact("Confidence", withheld ? `not shown (${withheld})` : `${s.finalSolution.confidence}%`, "debate-confidence"));
    }
    if (s.verdict) {
      const v = s.verdict;
      facts.push(fact("Verdict", `${v.winnerId ? `${agentName(s, v.winnerId)} won · ` : ""}quality ${v.quality} / 100`, "debate-verdict"));
    }
    if (s.vote) facts.push(fact("Vote", `${voteResult(s, s.vote)}${tallyText(s, s.vote) ? ` (${tallyText(s, s.vote)})` : ""}`, "debate-vote"));
    if (s.council) facts.push(fact("Council", standingsText(s, s.council), "debate-council"));
    if (s.correction) facts.push(fact("Correction", correctionResult(s, s.correction), "debate-correction"));
    $("outcome-facts").replaceChildren(...facts);

    const parts = [];
    if (s.stoppedEarly) parts.push(el("p", { text: `Stopped after round ${s.stoppedEarly.roundNumber}: ${s.stoppedEarly.reason}` }));
    if (s.finalSolution) {
      const f = s.finalSolution;
      const html = f.html || {};
      parts.push(el("section", { class: "solution", "aria-label": "The final solution" },
        el("h3", { text: "Final solution" }),
        f.judgeFailure ? el("p", { class: "meta", id: "solution-fallback", text: `${agentName(s, f.synthesizedBy)} wrote the synthesis in the judge's place: the judge failed (${f.judgeFailure}).` }) : null,
        rendered("div", "body", html.description),
        html.implementation ? rendered("div", "body", html.implementation) : null,
        listOf("Tradeoffs", html.tradeoffs), listOf("Recommendations", html.recommendations),
        listOf("Unfulfilled major requirements", html.unfulfilledMajorRequirements), listOf("Open questions", html.openQuestions),
        el("p", {}, el("strong", { text: f.confidenceWithheld ? `Confidence: not shown (${f.confidenceWithheld})` : `Confidence: ${f.confidence}%` })),
        s.judge ? windowBlock(s, s.judge.id) : null,
        toolCallList(f.toolCalls)));
    }
    if (s.verdict) {
      const v = s.verdict;
      parts.push(el("section", { class: "verdict", "aria-label": "The verdict" }, el("h3", { text: "The judge's verdict" }),
        rendered("div", "body", v.html ? v.html.summary : ""),
        v.winnerId ? el("p", {}, el("strong", { text: `Winner: ${agentName(s, v.winnerId)}` }), v.winnerReasoning ? ` — ${v.winnerReasoning}` : "") : null,
        listOf("Agreements", v.html && v.html.agreements), listOf("Disagreements", v.html && v.html.disagreements),
        listOf("Insights", v.html && v.html.insights),
        el("p", { class: "meta", text: `Debate quality ${v.quality} / 100` }),
        v.judgeSharesModelWith && v.judgeSharesModelWith.length ? el("p", { class: "meta", text: `The judge runs on the same model as ${v.judgeSharesModelWith.map((id) => agentName(s, id)).join(", ")}: self-preference is a known bias.` }) : null));
    }
    if (s.vote) {
      const v = s.vote;
      parts.push(el("section", { class: "vote", "aria-label": "The vote" }, el("h3", { text: `The vote (${v.rule})` }),
        el("p", { text: `${voteResult(s, v)}.` }),
        el("ul", { class: "tally" }, Object.entries(v.tally || {}).map(([id, votes]) => el("li", { text: `${agentName(s, id)}: ${votes}` })))));
    }
    if (s.council) parts.push(councilSection(s, s.council));
    if (s.correction) parts.push(correctionSection(s, s.correction));
    if (s.judgeSummary) parts.push(el("details", {}, el("summary", { text: "The judge's summary of the final round" }), rendered("div", "body", s.judgeSummary.summaryHtml)));
    for (const d of s.dropped) parts.push(el("p", { class: "meta", text: `${agentName(s, d.agentId)} was dropped in round ${d.roundNumber}: ${d.reason}` }));
    for (const w of s.discarded) parts.push(el("p", { class: "meta", text: `Round ${w.roundNumber} was worked on ahead and thrown away: ${w.calls} call(s), ${w.cancelledCalls} cancelled.` }));
    $("outcome-body").replaceChildren(...parts);
  }

  // -- the controls

  async function control(action, json) {
    const debate = current;
    try {
      await api(`/debates/${encodeURIComponent(debate.id)}/${action}`, { method: "POST", json });
      if (action === "pause") {
        debate.pauseAsked = true;
        note("Pausing: the calls in flight finish first…");
        schedule();
      }
      if (action === "resume") debate.pauseAsked = false;
      if (["resume", "answers"].includes(action) && current === debate) {
        closeStream();
        debate.state.status = "running";
        openStream();
      }
      return true;
    } catch (error) {
      if (action === "answers") showFieldErrors(error, "answers-form");
      else note(error.message);
      return false;
    }
  }

  async function submitAnswers(event) {
    event.preventDefault();
    showError($("error-answers"), "");
    const answers = {};
    for (const field of document.querySelectorAll("#question-fields textarea")) answers[field.dataset.question] = field.value;
    await control("answers", { answers });
  }

  // ---------------------------------------------------------------- wiring

  document.addEventListener("DOMContentLoaded", () => {
    $("status-filter").addEventListener("change", () => loadList(true));
    $("list-more").addEventListener("click", () => loadList(false));
    $("new-debate").addEventListener("submit", submitNewDebate);
    $("problem-file").addEventListener("change", readProblemFile);
    $("termination-type").addEventListener("change", () => { formChanged.termination = true; });
    $("termination-threshold").addEventListener("input", () => { formChanged.termination = true; });
    $("add-agent").addEventListener("click", async () => {
      const opts = await getOptions();
      const role = $("add-role").value;
      const template = opts.agents.find((a) => a.endpoint) || opts.judge;
      const name = opts.roles.find((r) => r.role === role).name;
      $("agent-rows").append(agentRow({ role, name, endpoint: template.endpoint, provider: template.provider, model: template.model, temperature: template.temperature }, opts));
    });
    $("answers-form").addEventListener("submit", submitAnswers);
    $("btn-pause").addEventListener("click", () => control("pause"));
    $("btn-resume").addEventListener("click", () => control("resume"));
    $("btn-retry").addEventListener("click", () => control("resume"));
    $("btn-cancel").addEventListener("click", () => control("cancel"));
    window.addEventListener("hashchange", route);
    loadNotices();
    route();
  });
})();
