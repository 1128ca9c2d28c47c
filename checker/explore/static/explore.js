// mc explore's page: asks the server for the view of a path and puts its fragments in place.
// The fragments are escaped HTML drawn by the server (checker/explore/page.py); spec text that
// arrives as JSON fields goes in with textContent only. The path lives in the URL (?path=),
// so the browser's back and forward, reloads and shared links all work.
// This run's token arrives in the fragment of the URL mc explore printed (#token=..., which no
// browser sends to a server); it is kept in sessionStorage (this tab, this port), taken out of
// the address bar, and sent with every API request in the X-MC-Token header. Never a cookie: a
// browser would send it to every port of 127.0.0.1.
(function () {
  'use strict';
  var $ = function (id) { return document.getElementById(id); };
  var spec = null;
  var polling = null;
  var KEY = 'mc-explore-token';
  var given = /(?:^#|&)token=([^&]+)/.exec(location.hash);
  if (given) {
    sessionStorage.setItem(KEY, decodeURIComponent(given[1]));
    history.replaceState(history.state, '', location.pathname + location.search);
  }
  var token = sessionStorage.getItem(KEY) || '';

  function ask(url, options) {
    var sent = options || {};
    sent.credentials = 'omit';
    sent.headers = Object.assign({'X-MC-Token': token}, sent.headers || {});
    return fetch(url, sent).then(function (r) {
      if (r.status === 403) {
        return r.text().then(function (t) { throw new Error(t.trim()); });
      }
      return r.json();
    });
  }

  function currentPath() {
    return new URLSearchParams(location.search).get('path') || '0';
  }

  function urlOf(path) {
    return location.pathname + '?path=' + encodeURIComponent(path).replace(/%2C/g, ',');
  }

  function fail(message) {
    var banner = $('error');
    banner.textContent = message;
    banner.hidden = !message;
  }

  function show(view) {
    $('state-title').textContent = 'State ' + view.depth + ' of this path';
    $('state').innerHTML = view.state;
    $('msc').innerHTML = view.chart;
    $('steps').innerHTML = view.steps;
    $('inits').innerHTML = view.inits;
    $('checks').innerHTML = view.checks;
    $('choices').innerHTML = view.choices;
    $('text-report').innerHTML = view.text;
    $('enabled-count').textContent = '(' + view.enabled + ' enabled)';
    $('deadlock').hidden = !view.deadlock;
    var verdict = $('verdict');
    if (view.violated.length) {
      verdict.textContent = 'invariant ' + view.violated.join(', ') + ' violated';
      verdict.className = 'verdict bad';
    } else {
      verdict.textContent = 'invariants hold';
      verdict.className = 'verdict good';
    }
    var rows = document.querySelectorAll('#msc [data-step]');
    rows.forEach(function (el) {
      el.classList.toggle('selected', Number(el.getAttribute('data-step')) === view.depth);
    });
    $('link').value = location.href;
    document.title = 'mc explore: ' + (spec ? spec.name + ': ' : '') + view.title;
    document.body.setAttribute('data-depth', String(view.depth));
    document.body.setAttribute('data-path', view.path);
  }

  function load(path, push) {
    document.body.setAttribute('data-busy', 'true');
    return ask('/api/view?path=' + encodeURIComponent(path))
      .then(function (view) {
        if (push && view.path !== currentPath()) {
          history.pushState({path: view.path}, '', urlOf(view.path));
        }
        if (view.error) {
          fail(view.error + ' (Initial state opens the start.)');
          document.body.setAttribute('data-path', '!' + path);
        } else {
          fail('');
          show(view);
        }
      })
      .catch(function (e) { fail(e.message || ('mc explore: the server did not answer (' + e + ')')); })
      .finally(function () { document.body.setAttribute('data-busy', 'false'); });
  }

  function go(path) { return load(path, true); }

  // -- find --------------------------------------------------------------------------------

  function findStatus(s) {
    var out = $('find-status');
    out.setAttribute('data-state', s.state);
    out.textContent = s.message || '';
    var running = s.state === 'running';
    $('find-stop').hidden = !running;
    if (running) { return; }
    clearInterval(polling);
    polling = null;
    if (s.path && s.state === 'found') { go(s.path); }
    if (s.path && s.state === 'error') {
      out.appendChild(document.createTextNode(' '));
      var where = document.createElement('button');
      where.type = 'button';
      where.textContent = 'Show that state';
      where.setAttribute('data-go', s.path);
      out.appendChild(where);
    }
  }

  function poll() {
    ask('/api/find').then(findStatus);
  }

  function find(ev) {
    ev.preventDefault();
    var body = JSON.stringify({expression: $('find-expr').value});
    ask('/api/find', {method: 'POST', headers: {'Content-Type': 'application/json'}, body: body})
      .then(function (s) {
        if (s.error) {
          $('find-status').setAttribute('data-state', 'refused');
          $('find-status').textContent = s.error;
          return;
        }
        findStatus(s);
        if (s.state === 'running' && polling === null) { polling = setInterval(poll, 200); }
      });
  }

  // -- wiring ------------------------------------------------------------------------------

  document.addEventListener('click', function (ev) {
    var el = ev.target.closest && ev.target.closest('[data-go]');
    if (el) { go(el.getAttribute('data-go')); return; }
    var row = ev.target.closest && ev.target.closest('#msc [data-step]');
    if (row) {
      var parts = currentPath().split(',');
      go(parts.slice(0, Number(row.getAttribute('data-step'))).join(','));
    }
  });
  window.addEventListener('popstate', function () { load(currentPath(), false); });
  $('back').addEventListener('click', function () { history.back(); });
  $('forward').addEventListener('click', function () { history.forward(); });
  $('restart').addEventListener('click', function () { go('0'); });
  $('jump').addEventListener('click', function () { if (spec && spec.trace) { go(spec.trace); } });
  $('find-form').addEventListener('submit', find);
  $('find-stop').addEventListener('click', function () {
    ask('/api/find/stop', {method: 'POST'}).then(findStatus);
  });
  $('link').addEventListener('focus', function () { this.select(); });

  ask('/api/spec')
    .then(function (s) {
      spec = s;
      $('spec-name').textContent = s.name;
      var constants = Object.keys(s.constants).map(function (k) {
        return k + '=' + s.constants[k];
      }).join(', ');
      $('spec-line').textContent = s.spec + ' · ' + s.title + ' · constants: ' +
        (constants || 'none') + (s.max_depth ? ' · --max-depth ' + s.max_depth : '');
      $('command').textContent = s.command;
      $('reopen').hidden = !s.command;
      if (s.trace) {
        $('jump').hidden = false;
        $('jump').title = s.trace_label;
        $('jump').textContent = 'Jump to the counterexample: ' + s.trace_label;
      }
      return load(currentPath(), false);
    })
    .catch(function (e) { fail(e.message); });
})();
