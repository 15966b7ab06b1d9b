#!/usr/bin/python3
"""Resident UNO client for one LibreOffice slot (run with Debian's /usr/bin/python3: it has `uno`).

    uno-convert.py PIPE_NAME CONNECT_TIMEOUT_S WARM_DIR SOFFICE_PGID

Connects to a soffice started with --accept=pipe,name=PIPE_NAME;urp; then answers one JSON
request per stdin line, {"id", "input", "output"[, "importFilter"]}, with one JSON line on stdout:
{"id", "ok": true, "filter"} or {"id", "ok": false, "kind": "encrypted"|"corrupt"|"crash", "message"}.
The first line is {"ready": true} once connected and warm. A request may add "importFilter":
{"name", "options"}: the document is then opened with that import filter and its options instead
of LibreOffice's type detection (a plain-text upload must be read as text, whatever it holds). Time limits are not kept here:
the Node side owns the timeout and kills soffice and this process together.
"""
import json
import os
import signal
import sys
import threading
import time

import uno
import unohelper
from com.sun.star.awt import XCallback
from com.sun.star.beans import PropertyValue
from com.sun.star.connection import NoConnectException
from com.sun.star.lang import DisposedException, XEventListener
from com.sun.star.task import XInteractionHandler
from com.sun.star.uno import RuntimeException as UnoRuntimeException

# The protocol owns the real stdout; whatever LibreOffice or Python libraries print goes to stderr.
PROTOCOL = os.fdopen(os.dup(1), "w", buffering=1, encoding="utf-8")
os.dup2(2, 1)

ABORT = uno.getTypeByName("com.sun.star.task.XInteractionAbort")
DISAPPROVE = uno.getTypeByName("com.sun.star.task.XInteractionDisapprove")
APPROVE = uno.getTypeByName("com.sun.star.task.XInteractionApprove")
PASSWORD = uno.getTypeByName("com.sun.star.task.XInteractionPassword")
CONTINUATIONS = (("abort", ABORT), ("disapprove", DISAPPROVE), ("approve", APPROVE), ("password", PASSWORD))

# Order matters: a presentation is also a drawing document.
EXPORT_FILTERS = (
    ("com.sun.star.presentation.PresentationDocument", "impress_pdf_Export"),
    ("com.sun.star.drawing.DrawingDocument", "draw_pdf_Export"),
    ("com.sun.star.text.WebDocument", "writer_web_pdf_Export"),
    ("com.sun.star.text.GlobalDocument", "writer_globaldocument_pdf_Export"),
    ("com.sun.star.text.TextDocument", "writer_pdf_Export"),
    ("com.sun.star.sheet.SpreadsheetDocument", "calc_pdf_Export"),
)


class BridgeGone(Exception):
    pass


def prop(name, value):
    p = PropertyValue()
    p.Name = name
    p.Value = value
    return p


def pick(continuations, *types):
    for wanted in types:
        for c in continuations:
            if c.queryInterface(wanted) is not None:
                return c
    return None


def message(e):
    return str(getattr(e, "Message", "") or e or type(e).__name__)


class Handler(unohelper.Base, XInteractionHandler):
    """Answers every question LibreOffice would put to a person, at once.

    The request itself cannot be inspected: pyuno 7.4 under Python 3.11 fails to convert the
    exception that `getRequest()` carries (SystemError from AttributeError('args')). The offered
    continuations tell enough: only a password request offers XInteractionPassword. Questions
    (repair this package? allow macros? update links?) are answered "no"; messages (warnings,
    errors) are acknowledged, which lets a load with a warning go on and a failed load fail."""

    def __init__(self):
        self.password_asked = False
        self.seen = []

    def handle(self, request):
        conts = request.getContinuations()
        offered = [name for name, t in CONTINUATIONS if pick(conts, t) is not None]
        self.seen.append("+".join(offered))
        if "password" in offered:
            self.password_asked = True
            chosen = pick(conts, ABORT, DISAPPROVE)
        else:
            chosen = pick(conts, DISAPPROVE, APPROVE, ABORT)
        if chosen is not None:
            chosen.select()


class Slot:
    """The connection to one soffice.

    All document work runs on soffice's main thread: we ask com.sun.star.awt.AsyncCallback to
    call us back from there and make our UNO calls inside that callback; URP routes them to the
    thread that is waiting for the callback to return. Driving Writer from the bridge thread
    instead lets the main loop run Writer's deferred UI work while the document is open, and on
    the -nogui packages (which ship no swriter .ui files) that work aborts soffice: a document
    with comments (odt-toc-15pages-lo54.odt) crashed it on annotation.ui. Working on the main
    thread is also what `soffice --convert-to` does, so behaviour matches the command line."""

    def __init__(self, pipe, timeout_s):
        local = uno.getComponentContext()
        smgr = local.ServiceManager
        connector = smgr.createInstanceWithContext("com.sun.star.connection.Connector", local)
        deadline = time.monotonic() + timeout_s
        while True:
            try:
                conn = connector.connect("pipe,name=%s" % pipe)
                break
            except NoConnectException:
                if time.monotonic() > deadline:
                    raise
                time.sleep(0.1)
        factory = smgr.createInstanceWithContext("com.sun.star.bridge.BridgeFactory", local)
        self.bridge = factory.createBridge("", "urp", conn, None)
        self.gone = threading.Event()
        self.bridge.addEventListener(_Gone(self.gone))
        ctx = self.bridge.getInstance("StarOffice.ComponentContext")
        rsmgr = ctx.ServiceManager
        self.desktop = rsmgr.createInstanceWithContext("com.sun.star.frame.Desktop", ctx)
        self.async_callback = rsmgr.createInstanceWithContext("com.sun.star.awt.AsyncCallback", ctx)

    def on_main_thread(self, fn):
        call = _Call(fn)
        try:
            self.async_callback.addCallback(call, None)
        except (DisposedException, UnoRuntimeException) as e:
            raise BridgeGone(message(e))
        while not call.done.wait(0.2):
            if self.gone.is_set():
                raise BridgeGone("the connection to LibreOffice was lost")
        if isinstance(call.error, DisposedException) or self.gone.is_set():
            raise BridgeGone(message(call.error) if call.error else "the connection to LibreOffice was lost")
        if call.error is not None:
            raise call.error
        return call.result

    def convert(self, req):
        res = self.on_main_thread(lambda: convert(self.desktop, req["input"], req["output"], req.get("importFilter")))
        # A RuntimeException can mean a broken file or a dying soffice; the bridge's disposing
        # notice may trail the exception a little, so give it a moment before calling it a file error.
        if res.pop("runtime_error", False) and self.gone.wait(0.5):
            raise BridgeGone("LibreOffice stopped while converting: " + res["message"])
        return res

    def warm(self, warm_dir):
        """Loads the Writer and Impress libraries and both PDF export paths once, so that the
        first real document does not pay for them."""
        def work():
            for factory, filt in (("swriter", "writer_pdf_Export"), ("simpress", "impress_pdf_Export")):
                out = os.path.join(warm_dir, "warm-%s.pdf" % factory)
                doc = self.desktop.loadComponentFromURL("private:factory/" + factory, "_blank", 0, (prop("Hidden", True),))
                try:
                    doc.storeToURL(uno.systemPathToFileUrl(out), (prop("FilterName", filt), prop("Overwrite", True)))
                finally:
                    close(doc)
                    if os.path.exists(out):
                        os.unlink(out)
        self.on_main_thread(work)


class _Gone(unohelper.Base, XEventListener):
    def __init__(self, event):
        self.event = event

    def disposing(self, _source):
        self.event.set()


class _Call(unohelper.Base, XCallback):
    def __init__(self, fn):
        self.fn = fn
        self.done = threading.Event()
        self.result = None
        self.error = None

    def notify(self, _data):
        try:
            self.result = self.fn()
        except Exception as e:  # handed to the waiting thread, which decides what it means
            self.error = e
        finally:
            self.done.set()


def close(doc):
    try:
        doc.close(True)
    except DisposedException:
        raise
    except Exception:  # CloseVetoException: disposing is the fallback
        doc.dispose()


def import_filter(chosen):
    """The import filter chosen by the Node side, as FilterName/FilterOptions properties, or ()."""
    if not chosen:
        return ()
    return (prop("FilterName", str(chosen["name"])), prop("FilterOptions", str(chosen.get("options") or "")))


def convert(desktop, input_path, output_path, chosen_filter=None):
    handler = Handler()
    args = import_filter(chosen_filter) + (
        prop("Hidden", True),
        prop("ReadOnly", True),
        prop("MacroExecutionMode", 0),  # com.sun.star.document.MacroExecMode.NEVER_EXECUTE
        prop("UpdateDocMode", 0),  # com.sun.star.document.UpdateDocMode.NO_UPDATE
        prop("RepairPackage", False),
        prop("Silent", True),
        prop("InteractionHandler", handler),
    )
    url = uno.systemPathToFileUrl(os.path.abspath(input_path))
    try:
        doc = desktop.loadComponentFromURL(url, "_blank", 0, args)
        failure = "LibreOffice returned no document"
    except DisposedException:
        raise
    except Exception as e:  # IOException, IllegalArgumentException, an importer's RuntimeException
        doc, failure = None, message(e)
        runtime_error = isinstance(e, UnoRuntimeException)
    else:
        runtime_error = False
    if doc is None:
        kind = "encrypted" if handler.password_asked else "corrupt"
        return {"ok": False, "kind": kind, "message": failure, "asked": handler.seen, "runtime_error": runtime_error}
    try:
        filt = next((f for service, f in EXPORT_FILTERS if doc.supportsService(service)), None)
        if filt is None:
            return {"ok": False, "kind": "corrupt", "message": "not a document LibreOffice can export to PDF"}
        out_url = uno.systemPathToFileUrl(os.path.abspath(output_path))
        try:
            doc.storeToURL(out_url, (prop("FilterName", filt), prop("Overwrite", True)))
        except DisposedException:
            raise
        except Exception as e:
            return {"ok": False, "kind": "corrupt", "message": "PDF export failed: " + message(e),
                    "runtime_error": isinstance(e, UnoRuntimeException)}
        return {"ok": True, "filter": filt, "asked": handler.seen}
    finally:
        close(doc)


def send(obj):
    PROTOCOL.write(json.dumps(obj) + "\n")


def orphaned(office_pgid):
    """The Node process is gone without having stopped us: take soffice down, nobody else will."""
    if office_pgid > 0:  # 0 would be our own group
        try:
            os.killpg(office_pgid, signal.SIGKILL)
        except OSError:
            pass
    os._exit(1)


def watch_parent(office_pgid):
    # stdin EOF covers an idle helper; this covers one blocked in a conversion.
    parent = os.getppid()
    while True:
        time.sleep(1)
        if os.getppid() != parent:
            orphaned(office_pgid)


def main():
    pipe, timeout_s, warm_dir, office_pgid = sys.argv[1], float(sys.argv[2]), sys.argv[3], int(sys.argv[4])
    threading.Thread(target=watch_parent, args=(office_pgid,), daemon=True).start()
    slot = Slot(pipe, timeout_s)
    slot.warm(warm_dir)
    send({"ready": True})
    for line in sys.stdin:
        if not line.strip():
            continue
        req = json.loads(line)
        try:
            res = slot.convert(req)
        except Exception as e:  # BridgeGone, or a bug here: either way this slot must restart
            send({"id": req["id"], "ok": False, "kind": "crash", "message": "%s: %s" % (type(e).__name__, e)})
            return 3
        res["id"] = req["id"]
        send(res)
    orphaned(office_pgid)  # Node never closes our stdin while it lives


if __name__ == "__main__":
    sys.exit(main())
