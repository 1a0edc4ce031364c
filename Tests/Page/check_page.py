#!/usr/bin/env python3
"""Checks sessiond's page in headless Chromium against mock_sessiond.py, through real pointer, touch and key input.

    check_page.py [--screenshots DIR]

Needs chromium, chromium-driver (Debian) and selenium (PyPI). Starts mock_sessiond.py on a free port of 127.0.0.1,
loads the page, and checks: the snapshot drawn, a mouse drag (pickup, moves, drop; the bubble follows the pointer),
a bubble held elsewhere refused, another device's moves drawn and timed, a lost pick-up race snapping back, a click
released before its pick-up is confirmed, a finger drag, the keyboard, the counter, a device lost, an error shown,
reconnection with its backoff (0.25 s doubling to 4 s), a pairing confirmed, no frame requested while idle, and
two pages as two devices: one drags, the other draws each move (window.lansessionSent against lansessionTimings).
With --screenshots, it saves views of the page (laptop, phone, dark) there. Exits 0 when every check passed.
"""
import argparse, json, os, shutil, socket, subprocess, sys, time, urllib.request
from selenium import webdriver
from selenium.webdriver.chrome.service import Service
from selenium.webdriver.common.action_chains import ActionChains
from selenium.webdriver.common.actions import interaction
from selenium.webdriver.common.actions.action_builder import ActionBuilder
from selenium.webdriver.common.actions.pointer_input import PointerInput
from selenium.webdriver.common.by import By
from selenium.webdriver.common.keys import Keys

HERE = os.path.dirname(os.path.abspath(__file__))
BASE = ""
fails = []


def mock(cmd):
    return json.load(urllib.request.urlopen(f"{BASE}/mock/{cmd}"))


def check(cond, what):
    print(("ok   " if cond else "FAIL ") + what, flush=True)
    if not cond: fails.append(what)


def wait(fn, t=3.0):
    end = time.time() + t
    while time.time() < end:
        try:
            v = fn()
            if v: return v
        except Exception:
            pass
        time.sleep(0.05)
    return fn()


def browser(w=1280, h=900, dark=False):
    o = webdriver.ChromeOptions()
    for a in ["--headless=new", "--no-sandbox", "--disable-gpu", f"--window-size={w},{h}", "--force-device-scale-factor=1"]:
        o.add_argument(a)
    if dark: o.add_argument("--blink-settings=preferredColorScheme=0")
    o.set_capability("goog:loggingPrefs", {"browser": "ALL"})
    driver = shutil.which("chromedriver") or "/usr/bin/chromedriver"
    return webdriver.Chrome(service=Service(driver), options=o)


def bub(d, v):
    e = d.find_element(By.CSS_SELECTOR, f'.bubble[data-view="{v}"]')
    return e, float(e.get_attribute("data-x")), float(e.get_attribute("data-y")), e.get_attribute("data-holder")


def checks(shots):

    d = browser()
    try:
        mock("clear"); mock("delay?ms=30")
        d.get(BASE + "/?token=abc123")
        wait(lambda: d.find_element(By.ID, "status").get_attribute("data-state") == "connected")
        check(d.find_element(By.ID, "status").get_attribute("data-state") == "connected", "status connected")
        check("token" not in d.current_url, f"token removed from URL ({d.current_url})")
        check(d.find_element(By.ID, "counter-total").get_attribute("data-total") == "7", "counter total from snapshot")
        check(d.find_element(By.ID, "counter-total").text == "7 times", "counter label 'N times'")
        peers = d.find_elements(By.CSS_SELECTOR, "#peers [data-peer]")
        check(len(peers) == 2 and all(p.get_attribute("data-state") == "connected" for p in peers), "two connected peers")
        time.sleep(2.2)
        shots and d.save_screenshot(f"{shots}/page-laptop.png")

        check(d.execute_script("return window.lansession.socket.readyState") == 1, "window.lansession.socket open")
        rtt = d.execute_script("return window.lansession.state.rtt")
        check(len(rtt) == 3 and all(len(v) >= 2 for v in rtt.values()), f"rtt samples kept per link ({ {k: len(v) for k, v in rtt.items()} })")
        check(len(d.find_elements(By.CSS_SELECTOR, "#graph polyline")) == 3, "one graph line per link")
        check(len(d.find_elements(By.CSS_SELECTOR, "#rtt-table tbody tr")) == 3, "p50/p99 row per link")

        # Drag bubble 1 by (+100, +150) CSS px.
        e, x0, y0, _ = bub(d, 1)
        scale = d.execute_script("return document.getElementById('board').getBoundingClientRect().width / 320")
        mock("clear")
        ac = ActionChains(d, duration=50)
        ac.click_and_hold(e)
        for i in range(10): ac.move_by_offset(10, 15)
        ac.perform()
        time.sleep(0.2)
        _, x1, y1, holder = bub(d, 1)
        check(holder == "00aa11bb22cc33dd", f"held by self while dragging (holder={holder})")
        shots and d.save_screenshot(f"{shots}/page-dragging.png")
        ActionChains(d).release().perform()
        time.sleep(0.3)
        ops = mock("log")
        kinds = [o["op"] for o in ops]
        print("ops:", kinds)
        check(kinds and kinds[0] == "pickup" and kinds[-1] == "drop" and "move" in kinds, "pickup, moves, drop sent")
        _, x2, y2, holder = bub(d, 1)
        ex, ey = x0 + 100 / scale, y0 + 150 / scale
        check(abs(x2 - ex) < 1.5 and abs(y2 - ey) < 1.5, f"bubble followed pointer: ({x2},{y2}) expected ~({ex:.1f},{ey:.1f})")
        check(holder == "", "free after drop")
        srv = mock("state")["bubbles"][1]
        check(abs(srv["x"] - x2) < 0.3 and abs(srv["y"] - y2) < 0.3 and "holder" not in srv, f"server has the drop position {srv}")
        sent = d.execute_script("return window.lansessionSent")
        check(len(sent) >= 1 and all(s["view"] == 1 for s in sent), f"lansessionSent recorded {len(sent)} moves")

        # A bubble held by another device cannot be taken.
        mock("hold?view=0&peer=a1b2c3d4e5f60718")
        wait(lambda: bub(d, 0)[3] == "a1b2c3d4e5f60718")
        e0 = bub(d, 0)[0]
        check(e0.value_of_css_property("cursor") == "not-allowed", "locked bubble cursor not-allowed")
        mock("clear")
        ActionChains(d, duration=50).click_and_hold(e0).move_by_offset(30, 30).release().perform()
        time.sleep(0.2)
        check(mock("log") == [], "no op for a bubble held elsewhere")
        # Another device's moves are drawn and timed.
        n0 = len(d.execute_script("return window.lansessionTimings"))
        for i in range(5):
            mock(f"move?view=0&x={100 + i * 10}&y={200 + i}")
            time.sleep(0.05)
        time.sleep(0.1)
        t = d.execute_script("return window.lansessionTimings")
        check(len(t) - n0 == 5 and t[-1]["x"] == 140 and t[-1]["y"] == 204, f"timings recorded remote moves: {t[n0:]}")
        _, xx, yy, _ = bub(d, 0)
        check((xx, yy) == (140.0, 204.0), "remote move drawn")
        shots and d.save_screenshot(f"{shots}/page-held-elsewhere.png")
        mock("drop?view=0&x=140&y=204")

        # Race: another device wins the pick-up; the bubble snaps back.
        mock("drop?view=1&x=250&y=400"); mock("drop?view=0&x=250&y=100"); time.sleep(0.1)
        mock("delay?ms=300"); mock("clear")
        e, xa, ya, _ = bub(d, 2)
        ac = ActionChains(d, duration=50); ac.click_and_hold(e).move_by_offset(40, 40).perform()
        time.sleep(0.05)
        mock("hold?view=2&peer=f0e1d2c3b4a59687")
        time.sleep(0.5)
        _, xb, yb, hb = bub(d, 2)
        check((xb, yb) == (xa, ya) and hb == "f0e1d2c3b4a59687", f"snapped back when another device got it ({xb},{yb},{hb})")
        ActionChains(d).release().perform()
        time.sleep(0.2)
        kinds = [o["op"] for o in mock("log")]
        # Moves go before the grant (the daemon keeps the latest for it); none is carried out, no drop is sent.
        check(kinds[0] == "pickup" and set(kinds[1:]) <= {"move"} and mock("state")["bubbles"][2].get("holder")
              == "f0e1d2c3b4a59687", f"only pickup and waiting moves sent in the race: {kinds}")
        mock("free?view=2"); mock("delay?ms=30")

        # Quick click: released before confirmation; drop follows the confirmation.
        mock("delay?ms=200"); mock("clear")
        e = bub(d, 2)[0]
        ActionChains(d, duration=20).click_and_hold(e).move_by_offset(5, 5).release().perform()
        time.sleep(0.5)
        kinds = [o["op"] for o in mock("log")]
        check(kinds[0] == "pickup" and kinds[-1] == "drop" and set(kinds[1:-1]) <= {"move"},
              f"quick click: pickup, then drop after confirmation: {kinds}")
        check("holder" not in mock("state")["bubbles"][2], "free after quick click")
        mock("delay?ms=30")

        # Touch: a finger drags bubble 0.
        mock("drop?view=0&x=160&y=240"); time.sleep(0.1); mock("clear")
        e, tx, ty, _ = bub(d, 0)
        ab = ActionBuilder(d, mouse=PointerInput(interaction.POINTER_TOUCH, "finger"), duration=50)
        ab.pointer_action.move_to(e).pointer_down()
        for i in range(6): ab.pointer_action.move_by(8, 4)
        ab.pointer_action.pointer_up()
        ab.perform(); time.sleep(0.4)
        kinds = [o["op"] for o in mock("log")]
        srv = mock("state")["bubbles"][0]
        check(kinds[0] == "pickup" and kinds[-1] == "drop" and abs(srv["x"] - (tx + 48 / scale)) < 1.5 and abs(srv["y"] - (ty + 24 / scale)) < 1.5,
              f"touch drag {kinds} {srv} from ({tx},{ty})")

        # Keyboard: Space picks up, arrows move, Space drops.
        mock("clear")
        e, kx, ky, _ = bub(d, 2)
        d.execute_script("arguments[0].focus()", e)
        e.send_keys(Keys.SPACE); time.sleep(0.2)
        e.send_keys(Keys.ARROW_RIGHT); time.sleep(0.05); e.send_keys(Keys.ARROW_DOWN); time.sleep(0.05)
        e.send_keys(Keys.SPACE); time.sleep(0.3)
        kinds = [o["op"] for o in mock("log")]
        srv = mock("state")["bubbles"][2]
        check(kinds[0] == "pickup" and kinds[-1] == "drop" and (srv["x"], srv["y"]) == (kx + 10, ky + 10) and "holder" not in srv,
              f"keyboard pickup/move/drop {kinds} {srv}")

        # An error while a pick-up waits: the page gives it up, and hands back a grant that comes anyway.
        mock("delay?ms=400"); mock("clear")
        e, gx, gy, _ = bub(d, 2)
        ActionChains(d, duration=20).click_and_hold(e).move_by_offset(30, 0).perform()
        time.sleep(0.05)
        mock("error?message=something+else+was+refused")
        time.sleep(0.1)
        _, ax, ay, ah = bub(d, 2)
        check((ax, ay, ah) == (gx, gy, ""), f"pending pick-up given up on an error ({ax},{ay},{ah!r})")
        time.sleep(0.5)
        ActionChains(d).release().perform()
        kinds = [o["op"] for o in mock("log")]
        check(kinds[0] == "pickup" and kinds[-1] == "drop" and set(kinds[1:-1]) <= {"move"}
              and "holder" not in mock("state")["bubbles"][2], f"late grant handed back: {kinds}")
        mock("delay?ms=30")

        # Increment.
        d.find_element(By.ID, "increment").click()
        wait(lambda: d.find_element(By.ID, "counter-total").get_attribute("data-total") == "8")
        check(d.find_element(By.ID, "counter-total").text == "8 times", "increment shown")

        # Peer lost.
        mock("peerstate?peer=f0e1d2c3b4a59687&state=lost")
        wait(lambda: d.find_element(By.CSS_SELECTOR, '[data-peer="f0e1d2c3b4a59687"]').get_attribute("data-state") == "lost")
        check(d.find_element(By.CSS_SELECTOR, '#peers [data-peer="f0e1d2c3b4a59687"]').get_attribute("data-state") == "lost", "peer lost shown")

        # A device found, then connected for the first time: "joined"; lost and connected again: "is back". The
        # counter has a row for every member, at 0 until it counts; a device only found has none.
        toasts = lambda: d.execute_script("return [...document.querySelectorAll('.toast')].map(t => t.textContent)")
        counter_rows = lambda: d.execute_script(
            "return [...document.querySelectorAll('#counter-peers li')].map(li => li.dataset.peer)")
        check("f0e1d2c3b4a59687" in counter_rows(), "a member that has not counted has a counter row")
        mock("discover?peer=77aa77bb77cc77dd&name=ken-mini")
        time.sleep(0.3)
        check("77aa77bb77cc77dd" not in counter_rows(), "a device only found has no counter row")
        mock("peerstate?peer=77aa77bb77cc77dd&state=connected")
        wait(lambda: any("ken-mini joined" in t for t in toasts()))
        check(any("ken-mini joined" in t for t in toasts()) and not any("ken-mini is back" in t for t in toasts()),
              f"first connection announced as joined: {toasts()}")
        check(wait(lambda: "77aa77bb77cc77dd" in counter_rows()), "a new member gets a counter row at 0")
        mock("peerstate?peer=77aa77bb77cc77dd&state=lost")
        mock("peerstate?peer=77aa77bb77cc77dd&state=connected")
        wait(lambda: any("ken-mini is back" in t for t in toasts()))
        check(any("ken-mini is back" in t for t in toasts()), f"a return announced as is back: {toasts()}")

        # Error toast.
        mock("error?message=bubble+1+is+held+by+another+device")
        time.sleep(0.3)
        check(len(d.find_elements(By.CSS_SELECTOR, ".toast")) >= 1, "toast shown")

        # Reconnect.
        mock("down?secs=1.5")
        wait(lambda: d.find_element(By.ID, "status").get_attribute("data-state") == "reconnecting")
        check(d.find_element(By.ID, "banner").is_displayed(), "reconnecting banner visible")
        shots and d.save_screenshot(f"{shots}/page-reconnecting.png")
        wait(lambda: d.find_element(By.ID, "status").get_attribute("data-state") == "connected", 8)
        check(d.find_element(By.ID, "status").get_attribute("data-state") == "connected", "reconnected")
        check(not d.find_element(By.ID, "banner").is_displayed(), "banner hidden after reconnect")
        mock("peerstate?peer=f0e1d2c3b4a59687&state=connected")

        # Backoff: 0.25 s doubling to 4 s.
        n0 = len(mock("attempts"))
        mock("down?secs=9.5")
        time.sleep(1.0)
        check(d.find_element(By.ID, "banner").is_displayed(), "banner while down")
        wait(lambda: d.find_element(By.ID, "status").get_attribute("data-state") == "connected", 15)
        a = mock("attempts")[n0:]
        gaps = [round(b - x) for x, b in zip(a, a[1:])]
        print("reconnect gaps ms:", gaps)
        check(len(gaps) >= 5 and all(abs(g - e) < 120 for g, e in zip(gaps, [500, 1000, 2000, 4000, 4000])), "backoff 0.25 s doubling to 4 s")

        # Pairing confirm.
        d.find_element(By.CSS_SELECTOR, ".pairing .primary").click()
        time.sleep(0.2)
        check(any(o["op"] == "pair" and o["code"] == "482913" for o in mock("log")), "pair sent with code")
        wait(lambda: d.find_element(By.ID, "pairings-card").get_attribute("hidden") is not None, 3)
        check(len(d.find_elements(By.CSS_SELECTOR, "#peers [data-peer]")) == 4, "paired device appears")  # two at the start, ken-mini, margaret-pi

        # Idle: nothing scheduled when nothing changes.
        mock("rtt?on=0"); time.sleep(1.2)
        n = d.execute_script("""
          return new Promise(res => { let n = 0; const orig = window.requestAnimationFrame;
            window.requestAnimationFrame = f => { n++; return orig(f); };
            setTimeout(() => { window.requestAnimationFrame = orig; res(n); }, 1500); });""")
        check(n == 0, f"no frames requested while idle ({n})")
        mock("rtt?on=1")

        logs = [l for l in d.get_log("browser") if l["level"] in ("SEVERE", "WARNING") and "503" not in l["message"]]
        check(not logs, f"no console errors {logs}")
    finally:
        d.quit()


def two_devices():
    """Two browsers, one playing another device: moves dragged in one are drawn in the other, and timed."""
    mock("drop?view=1&x=160&y=240"); mock("delay?ms=30")
    a, b = browser(), browser()
    try:
        a.get(BASE + "/"); b.get(BASE + "/?as=a1b2c3d4e5f60718")
        for d in (a, b): wait(lambda: d.find_element(By.ID, "status").get_attribute("data-state") == "connected")
        check(b.execute_script("return window.lansession.state.self.name") == "grace-thinkpad", "second page plays grace-thinkpad")
        e = bub(a, 1)[0]
        ac = ActionChains(a, duration=16).click_and_hold(e)
        for i in range(40): ac.move_by_offset(3 if i < 20 else -3, 2)
        ac.release().perform()
        time.sleep(0.3)
        sent = a.execute_script("return window.lansessionSent")
        drawn = b.execute_script("return window.lansessionTimings")
        lat = []
        for m in sent:
            hit = next((t for t in drawn if (t["view"], t["x"], t["y"]) == (m["view"], m["x"], m["y"]) and t["drawnAt"] >= m["sentAt"]), None)
            if hit: lat.append(hit["drawnAt"] - m["sentAt"])
        lat.sort()
        print(f"moves sent {len(sent)}, drawn on the other page {len(drawn)}, matched {len(lat)}; "
              f"sent to drawn p50 {lat[len(lat) // 2] if lat else float('nan'):.1f} ms, max {lat[-1] if lat else float('nan'):.1f} ms")
        check(len(sent) >= 20 and len(lat) >= len(sent) // 2, "the other page draws the moves sent")
        check(bub(b, 1)[1:3] == bub(a, 1)[1:3], f"both pages end at the same place {bub(a, 1)[1:3]}")
    finally:
        a.quit(); b.quit()


SIZES = [(360, 740), (390, 844), (820, 1180), (1280, 720), (1366, 768), (1920, 1080), (2560, 1440), (3840, 2160),
         (2560, 1300), (1280, 1357)]

# Every card's box, every visible element's box with the card it belongs to, and the page's scroll width; read from the
# DOM of the page as laid out.
BOXES = """
const box = (e) => { const r = e.getBoundingClientRect(); return [r.left, r.top, r.right, r.bottom]; };
const cards = [...document.querySelectorAll('.card')].filter((c) => c.offsetParent !== null);
const inside = [];
cards.forEach((card, i) => {
  for (const e of card.querySelectorAll('h2, .hint, #board-wrap, #counter-total, #increment, #counter-peers li, '
      + '.peer, .self, #graph svg, #legend .key, #rtt-table')) {
    const r = e.getBoundingClientRect();
    if (r.width > 0 && r.height > 0) inside.push([i, e.id || e.className || e.tagName, box(e)]);
  }
});
return { width: innerWidth, height: innerHeight, scroll: document.documentElement.scrollWidth,
         cards: cards.map(box), names: cards.map((c) => c.querySelector('h2')?.textContent ?? ''), inside,
         bubbles: [...document.querySelectorAll('.bubble')].map(box), board: box(document.getElementById('board')) };
"""


def sizes(shots):
    """The layout at phone, tablet, laptop and large screens: no card overlaps another, nothing sticks out of its
    card, the page never scrolls sideways, the bubbles at their starting places lie inside the board, and the console
    stays clean."""
    mock("drop?view=0&x=160&y=80"); mock("drop?view=1&x=160&y=200"); mock("drop?view=2&x=160&y=360")
    d = browser()
    try:
        d.get(BASE + "/")
        wait(lambda: d.find_element(By.ID, "status").get_attribute("data-state") == "connected")
        d.get_log("browser")
        for w, h in SIZES:
            # The viewport itself at that size (a window's size would include the browser's own frame).
            d.execute_cdp_cmd("Emulation.setDeviceMetricsOverride",
                              {"width": w, "height": h, "deviceScaleFactor": 1, "mobile": w < 800})
            time.sleep(0.4)
            b = d.execute_script(BOXES)
            problems = []
            if b["scroll"] > b["width"] + 1:
                problems.append(f"scrolls sideways ({b['scroll']} > {b['width']})")
            cards = b["cards"]
            for i in range(len(cards)):
                for j in range(i + 1, len(cards)):
                    (l1, t1, r1, b1), (l2, t2, r2, b2) = cards[i], cards[j]
                    if min(r1, r2) - max(l1, l2) > 1 and min(b1, b2) - max(t1, t2) > 1:
                        problems.append(f"cards '{b['names'][i]}' and '{b['names'][j]}' overlap")
            for i, name, (l, t, r, bo) in b["inside"]:
                cl, ct, cr, cb = cards[i]
                if l < cl - 1 or r > cr + 1 or t < ct - 1 or bo > cb + 1:
                    problems.append(f"{name} sticks out of '{b['names'][i]}'")
            bl, bt, br, bb = b["board"]
            for view, (l, t, r, bo) in enumerate(b["bubbles"]):
                if l < bl - 1 or r > br + 1 or t < bt - 1 or bo > bb + 1:
                    problems.append(f"bubble {view} at rest lies outside the board")
            errors = [e["message"][:120] for e in d.get_log("browser") if e["level"] == "SEVERE"]
            problems += [f"console: {e}" for e in errors]
            check(not problems, f"{w}x{h} (viewport {b['width']}x{b['height']}): " + ("; ".join(problems[:4]) or "fits"))
            if shots:
                d.save_screenshot(f"{shots}/size-{w}x{h}.png")
        d.execute_cdp_cmd("Emulation.clearDeviceMetricsOverride", {})
    finally:
        d.quit()


def views(shots):
    """The page as people see it: a device circling a bubble, one being dragged here, a minute of samples."""
    for w, h, dark, name in [(1280, 800, False, "laptop"), (1280, 800, True, "dark"), (390, 844, False, "phone")]:
        mock("drop?view=0&x=160&y=80"); mock("drop?view=1&x=160&y=200"); mock("drop?view=2&x=160&y=360")
        d = browser(w, h, dark)
        try:
            d.get(BASE + "/")
            wait(lambda: d.find_element(By.ID, "status").get_attribute("data-state") == "connected")
            mock("animate?on=1"); time.sleep(4); mock("animate?on=0"); time.sleep(0.1)
            e = d.find_element(By.CSS_SELECTOR, '.bubble[data-view="0"]')
            ActionChains(d, duration=50).click_and_hold(e).move_by_offset(100, 60).perform()
            time.sleep(0.5)
            d.save_screenshot(f"{shots}/view-{name}.png")
            ActionChains(d).release().perform()
            if name == "phone":
                d.set_window_size(w, 2600); time.sleep(0.4)
                d.save_screenshot(f"{shots}/view-phone-whole.png")
        finally:
            d.quit()


def main():
    global BASE
    ap = argparse.ArgumentParser(description="checks sessiond's page against mock_sessiond.py")
    ap.add_argument("--screenshots", metavar="DIR", help="save screenshots there")
    args = ap.parse_args()
    if args.screenshots: os.makedirs(args.screenshots, exist_ok=True)
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0)); port = s.getsockname()[1]
    BASE = f"http://127.0.0.1:{port}"
    server = subprocess.Popen([sys.executable, os.path.join(HERE, "mock_sessiond.py"), str(port)], stdout=subprocess.PIPE)
    try:
        server.stdout.readline()  # listening
        checks(args.screenshots)
        two_devices()
        sizes(args.screenshots)
        if args.screenshots: views(args.screenshots)
    finally:
        server.terminate(); server.wait()
    print("FAILED: " + "; ".join(fails) if fails else "all checks passed")
    sys.exit(1 if fails else 0)


if __name__ == "__main__":
    main()
