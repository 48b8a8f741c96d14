#!/usr/bin/env python3
"""The console in a real browser: headless Chromium from Debian, driven by chromedriver through Selenium.

usage: console_test.py BASE_URL READ_KEY FROM TO SCREENSHOT_DIR PROFILE_DIR

Signs in, sees the seeded incident, opens it, checks the chart's deploy marker and baseline, follows the link to
the deploy, changes the window, visits every page with axe-core (no serious or critical violation), takes
screenshots at 1280 and 390 px (light and dark), and signs out. Exits 0 when every check passed, 1 otherwise;
the browser is quit whatever happens.
"""
import os
import sys
import urllib.parse

from axe_selenium_python import Axe
from selenium import webdriver
from selenium.webdriver.chrome.service import Service
from selenium.common.exceptions import TimeoutException, WebDriverException
from selenium.webdriver.common.by import By
from selenium.webdriver.support.ui import WebDriverWait

base, key, start, end, shots, profile = sys.argv[1:7]
os.makedirs(shots, exist_ok=True)
failures = []


def check(condition, message):
    if not condition:
        failures.append(message)
        print("FAIL: " + message, flush=True)


def axe_check(driver, name):
    axe = Axe(driver)
    axe.inject()
    results = axe.run()
    bad = [v for v in results["violations"] if v.get("impact") in ("serious", "critical")]
    for violation in bad:
        nodes = [n.get("target") for n in violation.get("nodes", [])][:3]
        print(f"axe {name}: {violation['impact']} {violation['id']}: {violation['help']} {nodes}", flush=True)
    check(not bad, f"axe found {len(bad)} serious or critical violations on {name}")


def click_and_wait(element):
    """Clicks a link or a submit button and waits (bounded) until the next page has replaced this one."""
    page = driver.find_element(By.TAG_NAME, "html")
    element.click()

    def replaced(_):
        # staleness_of expects StaleElementReferenceException, but Chromium answers a node of a document being
        # torn down with "Node with given id does not belong to the document" (a plain WebDriverException): both
        # mean the old page is gone.
        try:
            page.is_enabled()
            return False
        except WebDriverException:
            return True

    try:
        WebDriverWait(driver, 20).until(replaced)
    except TimeoutException:
        check(False, f"no new page after clicking {element}: {driver.current_url}")


def shot(driver, name):
    driver.execute_script("window.scrollTo(0, 0)")
    driver.save_screenshot(os.path.join(shots, name + ".png"))


options = webdriver.ChromeOptions()
for argument in ("--headless=new", "--no-sandbox", "--disable-dev-shm-usage", "--disable-gpu",
                 "--window-size=1280,900", "--disable-extensions", "--no-first-run"):
    options.add_argument(argument)
# The caller's directory: it finds any browser process left behind by this path in its command line.
options.add_argument(f"--user-data-dir={profile}")
options.binary_location = "/usr/bin/chromium"
driver = webdriver.Chrome(service=Service("/usr/bin/chromedriver"), options=options)
driver.set_page_load_timeout(60)
try:
    window = urllib.parse.urlencode({"from": start, "to": end})
    driver.get(f"{base}/console/?{window}")
    check("/console/sign-in" in driver.current_url, f"not signed in, sent to the sign-in form: {driver.current_url}")
    check(key not in driver.current_url, "the key is in no URL")
    axe_check(driver, "sign-in")
    driver.find_element(By.ID, "key").send_keys("not-a-key")
    click_and_wait(driver.find_element(By.ID, "sign-in"))
    check(len(driver.find_elements(By.ID, "sign-in-error")) == 1, "a wrong key is refused with a message")
    driver.find_element(By.ID, "key").send_keys(key)
    click_and_wait(driver.find_element(By.ID, "sign-in"))
    check(driver.current_url.startswith(f"{base}/console/?"), f"back on the Now page: {driver.current_url}")
    check(key not in driver.current_url, "the key is in no URL after signing in")
    cookies = {c["name"]: c for c in driver.get_cookies()}
    session = cookies.get("flowmeter_console")
    check(session is not None, "a session cookie is set")
    if session:
        check(session.get("httpOnly") is True, "the cookie is HttpOnly")
        check(session.get("sameSite") == "Strict", f"the cookie is SameSite=Strict: {session}")
        check(session.get("value") != key, "the cookie holds a session id, not the key")

    # Now: the seeded incident and the ungated type.
    rows = driver.find_elements(By.CSS_SELECTOR, "#incidents tr.incident")
    check(len(rows) >= 1, "the Now page lists the incident")
    check("video_tile" in driver.page_source, "the video_tile incident is on the Now page")
    check("hologram_projector" in driver.find_element(By.ID, "ungated").text, "the ungated type is listed")
    check(len(driver.find_elements(By.CSS_SELECTOR, "body[data-refresh='60']")) == 1,
          "the Now page reloads every minute")
    axe_check(driver, "now")
    shot(driver, "now-1280")
    toggle = driver.find_element(By.ID, "refresh-toggle")
    check(toggle.is_displayed(), "with scripts on, the reload can be paused")
    toggle.click()
    check(toggle.text == "resume", f"paused: {toggle.text}")


    # The incident: chart with the deploy marker and the baseline.
    link = [a for a in driver.find_elements(By.CSS_SELECTOR, "a.incident-link") if a.text == "video_tile"]
    check(len(link) == 1, "one link to the video_tile incident")
    click_and_wait(link[0])
    check("/console/incident?" in driver.current_url, f"on the incident page: {driver.current_url}")
    deploys = driver.find_elements(By.CSS_SELECTOR, "#incident-chart svg .chart-deploy")
    check(len(deploys) >= 1, "the chart has a deploy marker")
    check(any(d.get_attribute("data-deploy") == "page-api@2026.11.30-2" for d in deploys),
          "the marker is page-api@2026.11.30-2")
    check(len(driver.find_elements(By.CSS_SELECTOR, "#incident-chart svg #incident-baseline.chart-baseline")) == 1,
          "the chart has the baseline")
    check(len(driver.find_elements(By.CSS_SELECTOR, "#incident-chart svg .chart-series")) >= 1,
          "the chart has a version's series")
    check("flowmeter spikes --app com.example.shop" in driver.page_source, "the CLI line for the same view")
    axe_check(driver, "incident")
    shot(driver, "incident-1280")
    incident_url = driver.current_url

    # Follow the suspect deploy to the deploys timeline.
    click_and_wait(driver.find_element(By.CSS_SELECTOR, "dl.facts a.deploy-link"))
    check("/console/deploys" in driver.current_url and "#deploy-page-api" in driver.current_url,
          f"on the deploy's entry: {driver.current_url}")
    fragment = urllib.parse.urlparse(driver.current_url).fragment
    entries = driver.find_elements(By.ID, fragment)
    check(len(entries) == 1 and "video_tile" in entries[0].text, "the deploy lists the incident attributed to it")
    axe_check(driver, "deploys")
    shot(driver, "deploys-1280")

    # The type, gates, manifests and reports pages.
    for path, name in (("/console/type?" + urllib.parse.urlencode(
            {"app": "com.example.shop", "type": "video_tile", "from": start, "to": end}), "type"),
            ("/console/gates?" + window, "gates"), ("/console/manifests", "manifests"),
            ("/console/reports", "reports")):
        driver.get(base + path)
        check(driver.find_elements(By.TAG_NAME, "h1"), f"{name} has a heading")
        check("Cannot show this view" not in driver.page_source, f"{name} shows its view")
        axe_check(driver, name)
        shot(driver, f"{name}-1280")
    week = driver.find_elements(By.CSS_SELECTOR, "#reports a")
    check(len(week) >= 4, "the reports page lists weeks")

    # Change the window: the filter form's start, then a look-back link.
    driver.get(f"{base}/console/?{window}")
    later = start.replace("T06:", "T09:")
    field = driver.find_element(By.ID, "filter-from")
    field.clear()
    field.send_keys(later)
    click_and_wait(driver.find_element(By.ID, "filter-apply"))
    query = urllib.parse.parse_qs(urllib.parse.urlparse(driver.current_url).query)
    check(query.get("from") == [later], f"the window is in the URL: {driver.current_url}")
    check(later[:10] in driver.find_element(By.ID, "freshness").text, "the page shows the new window")
    click_and_wait(driver.find_element(By.ID, "window-7d"))
    query = urllib.parse.parse_qs(urllib.parse.urlparse(driver.current_url).query)
    check(query.get("since") == ["7d"] and "from" not in query, f"a look-back link: {driver.current_url}")

    # Keyboard: the skip link is the first stop and the navigation is reachable.
    driver.get(f"{base}/console/?{window}")
    body = driver.find_element(By.TAG_NAME, "body")
    from selenium.webdriver.common.keys import Keys
    body.send_keys(Keys.TAB)
    check(driver.switch_to.active_element.get_attribute("class") == "skip", "Tab reaches the skip link first")

    # 390 px, and dark mode.
    driver.set_window_size(390, 844)
    driver.get(f"{base}/console/?{window}")
    width = driver.execute_script("return document.documentElement.scrollWidth")
    check(width <= 390, f"the Now page fits 390 px without scrolling sideways: {width}")
    shot(driver, "now-390")
    driver.get(incident_url)
    shot(driver, "incident-390")
    driver.execute_cdp_cmd("Emulation.setEmulatedMedia",
                           {"features": [{"name": "prefers-color-scheme", "value": "dark"}]})
    driver.get(f"{base}/console/?{window}")
    background = driver.execute_script("return getComputedStyle(document.body).backgroundColor")
    check(background == "rgb(13, 17, 23)", f"dark mode: {background}")
    axe_check(driver, "now (dark)")
    shot(driver, "now-390-dark")
    driver.set_window_size(1280, 900)
    driver.get(incident_url)
    axe_check(driver, "incident (dark)")
    shot(driver, "incident-1280-dark")

    # Sign out: back to the form, and the pages ask again.
    click_and_wait(driver.find_element(By.CSS_SELECTOR, "form.sign-out button"))
    check("/console/sign-in" in driver.current_url, f"signed out: {driver.current_url}")
    driver.get(f"{base}/console/?{window}")
    check("/console/sign-in" in driver.current_url, "after signing out the console asks for the key again")
finally:
    driver.quit()

if failures:
    print(f"{len(failures)} checks failed", flush=True)
    sys.exit(1)
print("console: every check passed", flush=True)
