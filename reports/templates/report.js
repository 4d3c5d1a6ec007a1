"use strict";
/* gpuaudit report: search, sort, and the findings of large groups listed from their data.
   Static: no report data is ever written into this script (its hash is in the page's CSP).
   Rows are built with createElement and textContent only: data is never parsed as HTML. */
(function () {
  var list = document.getElementById("groups");
  var search = document.getElementById("search");
  var sort = document.getElementById("sort");
  var said = document.getElementById("matches");
  if (!list || !search || !sort || !said) { return; }
  document.getElementById("tools").hidden = false;
  var FIELDS = ["anchor", "status", "severity", "rank", "order", "saving_value", "saving",
    "resource", "kind", "fqn", "location", "href", "message", "basis", "saving_kind",
    "suppression", "tags", "evidence", "remediation"];
  var CHUNK = 500;
  var ROWS = 50;
  var groups = Array.prototype.slice.call(list.querySelectorAll("details.group"));
  var timer = 0;

  function el(tag, cls, text) {
    var e = document.createElement(tag);
    if (cls) { e.className = cls; }
    if (text !== undefined && text !== null && text !== "") { e.textContent = String(text); }
    return e;
  }

  /* An evidence key as a reader says it: snake_case words spaced, the first capitalised, known
     abbreviations in capitals ("purchase_option_from" -> "Purchase option from"); AWS's own
     CamelCase names (InstanceId) are kept as AWS writes them. reports/html.py label() is the
     same rule. */
  var UPPER = {gpu: "GPU", gpus: "GPUs", usd: "USD", id: "ID", ids: "IDs", ami: "AMI",
    ebs: "EBS", kms: "KMS", vpc: "VPC", az: "AZ", ip: "IP", arn: "ARN", s3: "S3", asg: "ASG",
    eks: "EKS", iam: "IAM", cpu: "CPU", sku: "SKU", url: "URL", ok: "OK"};
  function label(key) {
    var k = String(key);
    if (!/^[a-z0-9_]+$/.test(k) || k.indexOf("_") < 0 && !UPPER[k]) {
      return /^[a-z][a-z0-9]*$/.test(k) ? k.charAt(0).toUpperCase() + k.slice(1) : k;
    }
    var words = k.split("_").filter(Boolean).map(function (w) { return UPPER[w] || w; });
    var text = words.join(" ");
    return text.charAt(0).toUpperCase() + text.slice(1);
  }

  function scalar(v) { return typeof v === "string" ? v : JSON.stringify(v); }

  function evidence(value, depth) {
    if (depth >= 4 && value !== null && typeof value === "object") {
      return el("span", "mono", JSON.stringify(value));
    }
    var table, row;
    if (Array.isArray(value)) {
      if (!value.length) { return el("span", "sub", "(none)"); }
      var shown = value.slice(0, ROWS);
      var box = el("div");
      if (shown.every(function (v) { return v !== null && typeof v === "object" && !Array.isArray(v); })) {
        var keys = [];
        shown.forEach(function (item) {
          Object.keys(item).forEach(function (k) { if (keys.indexOf(k) < 0) { keys.push(k); } });
        });
        table = el("table", "ev list");
        row = table.insertRow();
        keys.forEach(function (k) { row.appendChild(el("th", "", label(k))); });
        shown.forEach(function (item) {
          var r = table.insertRow();
          keys.forEach(function (k) {
            var cell = r.insertCell();
            if (Object.prototype.hasOwnProperty.call(item, k)) { cell.appendChild(evidence(item[k], depth + 1)); }
          });
        });
        box.appendChild(table);
      } else {
        var ul = el("ul", "ev");
        shown.forEach(function (v) { ul.appendChild(el("li")).appendChild(evidence(v, depth + 1)); });
        box.appendChild(ul);
      }
      if (value.length > ROWS) { box.appendChild(el("div", "sub", "… and " + (value.length - ROWS) + " more")); }
      return box;
    }
    if (value !== null && typeof value === "object") {
      var keys2 = Object.keys(value).sort();
      if (!keys2.length) { return el("span", "sub", "{}"); }
      table = el("table", "ev");
      keys2.forEach(function (k) {
        row = table.insertRow();
        row.appendChild(el("th", "", label(k)));
        row.insertCell().appendChild(evidence(value[k], depth + 1));
      });
      return table;
    }
    return el("span", "mono", scalar(value));
  }

  function remediation(cell, rem) {
    cell.appendChild(el("div", "label", "Remediation"));
    cell.appendChild(el("div", "", rem[0]));
    rem[1].forEach(function (pair) {
      var d = cell.appendChild(el("details"));
      d.appendChild(el("summary", "", pair[0]));
      d.appendChild(el("pre", "", pair[1]));
    });
  }

  function build(rec) {
    var f = {};
    FIELDS.forEach(function (name, i) { f[name] = rec[i]; });
    var body = el("tbody", "finding st-" + f.status + " sev-" + f.severity);
    body.id = f.anchor;
    body.setAttribute("data-saving", f.saving_value);
    body.setAttribute("data-rank", f.rank);
    body.setAttribute("data-order", f.order);
    var head = body.insertRow();
    head.className = "head";
    head.insertCell().appendChild(el("span", "badge sev-" + f.severity, f.severity));
    head.insertCell().appendChild(el("span", "badge st-" + f.status, f.status));
    var res = head.insertCell();
    res.appendChild(el("span", "mono", f.resource));
    res.appendChild(el("div", "sub", f.kind));
    if (f.fqn) { res.appendChild(el("div", "sub mono", f.fqn)); }
    f.tags.forEach(function (t) { res.appendChild(el("span", "tag", t[0] + "=" + t[1])); });
    var loc = head.insertCell();
    loc.className = "mono";
    if (f.href) {
      var a = el("a", "file", f.location);
      a.setAttribute("href", f.href);
      loc.appendChild(a);
    } else {
      loc.textContent = f.location;
    }
    var exposure = String(f.saving_kind || "").indexOf("exposure: ") === 0;
    var sav = head.insertCell();
    sav.className = "saving";
    sav.textContent = exposure ? "" : f.saving;
    var exp = head.insertCell();
    exp.className = "saving exposure";
    exp.textContent = exposure ? f.saving : "";
    var detail = body.insertRow();
    detail.className = "detail";
    var cell = detail.insertCell();
    cell.colSpan = 6;
    cell.appendChild(el("p", "message", f.message));
    if (f.suppression) { cell.appendChild(el("p", "suppressed", "Suppressed " + f.suppression)); }
    if (f.basis) {
      cell.appendChild(el("div", "label", (exposure ? "Exposure" : "Saving") + " basis (" +
        f.saving_kind + ")"));
      cell.appendChild(el("div", "mono", f.basis));
    }
    if (f.evidence !== null && f.evidence !== undefined) {
      var d = cell.appendChild(el("details"));
      d.appendChild(el("summary", "", "Evidence"));
      d.appendChild(evidence(f.evidence, 0));
    }
    if (f.remediation) { remediation(cell, f.remediation); }
    return body;
  }

  function Data(group) {
    var block = group.querySelector("script.rows");
    this.group = group;
    this.table = group.querySelector("table.findings");
    this.button = group.querySelector("button.more");
    this.block = block;
    this.records = null;
    this.shown = {};
    this.left = 0;
    if (block) {
      var note = group.querySelector(".rest-note");
      if (note) { note.hidden = true; }
      this.button.hidden = false;
      var self = this;
      this.button.addEventListener("click", function () { self.more(); });
    }
  }
  Data.prototype.load = function () {
    if (this.records === null) {
      this.records = this.block ? JSON.parse(this.block.textContent) : [];
      this.texts = this.records.map(function (r) {
        return (r.slice(0, 16).join(" ") + " " + JSON.stringify(r.slice(16))).toLowerCase();
      });
      this.left = this.records.length;
    }
    return this.records;
  };
  Data.prototype.render = function (indices) {
    var self = this;
    var frag = document.createDocumentFragment();
    indices.forEach(function (i) {
      if (self.shown[i]) { return; }
      self.shown[i] = true;
      self.left -= 1;
      frag.appendChild(build(self.records[i]));
    });
    this.table.appendChild(frag);
    this.label();
  };
  Data.prototype.label = function () {
    this.button.hidden = this.left <= 0;
    this.button.textContent = "Show " + Math.min(CHUNK, this.left) + " more of " + this.left +
      " not yet listed";
  };
  Data.prototype.more = function () {
    var records = this.load();
    var order = records.map(function (_, i) { return i; });
    if (sort.value === "saving") {
      order.sort(function (a, b) { return records[b][5] - records[a][5] || a - b; });
    }
    var next = [];
    for (var k = 0; k < order.length && next.length < CHUNK; k += 1) {
      if (!this.shown[order[k]]) { next.push(order[k]); }
    }
    this.render(next);
    if (search.value.trim()) { apply(); }
  };
  var data = groups.map(function (g) { return new Data(g); });
  data.forEach(function (d) { if (d.block) { d.label(); } });

  function rowText(row) {
    if (row._text === undefined) { row._text = row.textContent.toLowerCase(); }
    return row._text;
  }

  /* Whether the status filter (CSS only: the radio buttons) shows findings of this status;
     the same rules as the stylesheet's body:has(#show-...:checked) ones. */
  function statusShown(status) {
    var on = document.querySelector("input[name=show]:checked");
    var which = on ? on.id : "show-all";
    if (which === "show-attention") { return status !== "PASS"; }
    if (which === "show-FAIL") { return status === "FAIL"; }
    if (which === "show-SUPPRESSED") { return status === "SUPPRESSED"; }
    if (which === "show-ERROR") { return status === "ERROR" || status === "UNKNOWN"; }
    return true;
  }

  function statusOf(row) {
    var m = /(?:^| )st-([A-Z]+)/.exec(row.className);
    return m ? m[1] : "";
  }

  /* The search hides the rows that do not match and the groups left with no row shown (under
     the status filter too); the counter says how many of the findings the filter shows match:
     "N of M shown". */
  function apply() {
    var terms = search.value.toLowerCase().split(/\s+/).filter(Boolean);
    var hits = 0;
    var total = 0;
    var unlisted = 0;
    data.forEach(function (d) {
      if (terms.length && d.block) {
        d.load();
        var wanted = [];
        var over = 0;
        d.over = 0;
        d.texts.forEach(function (t, i) {
          if (d.shown[i] || !terms.every(function (w) { return t.indexOf(w) !== -1; })) { return; }
          if (!statusShown(d.records[i][1])) { return; }
          if (wanted.length < CHUNK) { wanted.push(i); } else { over += 1; }
        });
        d.render(wanted);
        d.over = over;
        unlisted += over;
      }
      var rows = d.group.querySelectorAll("tbody.finding");
      var any = false;
      Array.prototype.forEach.call(rows, function (row) {
        var ok = terms.every(function (w) { return rowText(row).indexOf(w) !== -1; });
        row.classList.toggle("nomatch", !ok);
        if (!statusShown(statusOf(row))) { return; }
        total += 1;
        if (ok) { hits += 1; any = true; }
      });
      if (d.block && d.records !== null) {
        d.records.forEach(function (r, i) { if (!d.shown[i] && statusShown(r[1])) { total += 1; } });
      } else if (d.block) {
        total += d.left;
      }
      d.group.classList.toggle("nomatch", terms.length > 0 && !any && !d.over);
      if (terms.length && any) { d.group.open = true; }
    });
    hits += unlisted;
    said.textContent = terms.length ? hits + " of " + total + " shown" +
      (unlisted ? " (" + unlisted + " more than listed: refine the search)" : "") : "";
  }

  function number(e, key) { return parseFloat(e.getAttribute(key)) || 0; }

  function reorder() {
    var bySaving = sort.value === "saving";
    data.sort(function (a, b) {
      return (bySaving ? number(b.group, "data-saving") - number(a.group, "data-saving") ||
        number(b.group, "data-exposure") - number(a.group, "data-exposure") : 0) ||
        number(a.group, "data-order") - number(b.group, "data-order");
    });
    data.forEach(function (d) {
      list.appendChild(d.group);
      var own = Array.prototype.slice.call(d.table.querySelectorAll("tbody.finding"));
      own.sort(function (a, b) {
        return (bySaving ? number(b, "data-saving") - number(a, "data-saving") : 0) ||
          number(a, "data-order") - number(b, "data-order");
      });
      var frag = document.createDocumentFragment();
      own.forEach(function (row) { frag.appendChild(row); });
      d.table.appendChild(frag);
    });
  }

  search.addEventListener("input", function () {
    window.clearTimeout(timer);
    timer = window.setTimeout(apply, 150);
  });
  search.addEventListener("keydown", function (event) {
    if (event.key === "Enter") { window.clearTimeout(timer); apply(); }
  });
  sort.addEventListener("change", reorder);
  Array.prototype.forEach.call(document.querySelectorAll("input[name=show]"), function (r) {
    r.addEventListener("change", function () { if (search.value.trim()) { apply(); } });
  });
})();
