import FlowmeterCLI
import Foundation
import TestSupport
import Testing

/// Renders the HTML report with headless Chromium (Debian `chromium`) and checks the screenshot is a page, not a
/// blank or an error.
@Suite struct ReportRenderingTests {
    static let chromium = "/usr/bin/chromium"

    /// Decodes a PNG with the Python standard library only (zlib) and prints `width height distinctColours
    /// inkShare`: ink is any pixel clearly darker than the page background.
    static let pngProbe = #"""
        import struct, sys, zlib
        data = open(sys.argv[1], "rb").read()
        assert data[:8] == b"\x89PNG\r\n\x1a\n", "not a PNG"
        pos, idat, header = 8, b"", None
        while pos < len(data):
            length, kind = struct.unpack(">I4s", data[pos:pos + 8])
            body = data[pos + 8:pos + 8 + length]
            if kind == b"IHDR": header = struct.unpack(">IIBBBBB", body)
            if kind == b"IDAT": idat += body
            pos += 12 + length
        width, height, depth, colour = header[:4]
        assert depth == 8 and colour in (2, 6), "unexpected PNG format %r" % (header,)
        bpp = 3 if colour == 2 else 4
        raw = zlib.decompress(idat)
        stride = width * bpp
        previous = bytearray(stride)
        colours, ink, seen = set(), 0, 0
        for y in range(height):
            start = y * (stride + 1)
            kind, line = raw[start], bytearray(raw[start + 1:start + 1 + stride])
            for i in range(stride):
                left = line[i - bpp] if i >= bpp else 0
                up = previous[i]
                corner = previous[i - bpp] if i >= bpp else 0
                if kind == 1: line[i] = (line[i] + left) & 255
                elif kind == 2: line[i] = (line[i] + up) & 255
                elif kind == 3: line[i] = (line[i] + (left + up) // 2) & 255
                elif kind == 4:
                    p = left + up - corner
                    pa, pb, pc = abs(p - left), abs(p - up), abs(p - corner)
                    line[i] = (line[i] + (left if pa <= pb and pa <= pc else up if pb <= pc else corner)) & 255
            previous = line
            if y % 2: continue
            for x in range(0, width, 2):
                r, g, b = line[x * bpp:x * bpp + 3]
                colours.add((r >> 3, g >> 3, b >> 3))
                seen += 1
                if r + g + b < 450: ink += 1
        print(width, height, len(colours), round(ink / seen, 4))
        """#

    /// The limit is a guard against a hang, sized for a loaded 2-core machine: the test took 112 s in a `make test`
    /// beside the rest of the suite and 223 s in a soak with every core kept busy, close to a 3-minute limit.
    @Test(.timeLimit(.minutes(10)))
    func headlessChromiumRendersAReadablePage() throws {
        // make test installs chromium: a missing one fails here rather than passing unchecked.
        try #require(
            FileManager.default.isExecutableFile(atPath: Self.chromium),
            "\(Self.chromium) is missing (apt-get install chromium; make test installs it)")
        let scenario = try ReportScenario.make()
        let report = try WeeklyReportBuilder().report(
            reader: scenario.store, week: ISOWeek(year: 2026, week: 48)!, now: ReportModelTests.now)
        let directory = try TemporaryDirectory(prefix: "flowmeter-report-render")
        let htmlPath = directory.file("report.html")
        // FLOWMETER_REPORT_PNG=PATH keeps the screenshot (and the HTML and Markdown beside it) for a look.
        let pngPath = ProcessInfo.processInfo.environment["FLOWMETER_REPORT_PNG"] ?? directory.file("report.png")
        try Data(report.html.utf8).write(to: URL(fileURLWithPath: htmlPath))
        if ProcessInfo.processInfo.environment["FLOWMETER_REPORT_PNG"] != nil {
            try? FileManager.default.removeItem(atPath: pngPath + ".html")
            try FileManager.default.copyItem(atPath: htmlPath, toPath: pngPath + ".html")
            try Data(report.markdown.utf8).write(to: URL(fileURLWithPath: pngPath + ".md"))
        }

        // `timeout` bounds a hung browser: TERM after 90 s, KILL 5 s later.
        let status = try Self.run(
            "/usr/bin/timeout",
            [
                "--kill-after=5", "90", Self.chromium, "--headless", "--no-sandbox", "--disable-gpu",
                "--disable-dev-shm-usage", "--hide-scrollbars", "--no-first-run",
                "--user-data-dir=" + directory.file("profile"),
                "--screenshot=" + pngPath, "--window-size=1200,2000", "file://" + htmlPath,
            ])
        #expect(status == 0, "chromium exited \(status)")
        let attributes = try FileManager.default.attributesOfItem(atPath: pngPath)
        let size = (attributes[.size] as? NSNumber)?.intValue ?? 0
        #expect(size > 50_000, "screenshot of \(size) bytes is too small to hold the report")

        guard
            let python = ["/usr/bin/python3", "/usr/local/bin/python3"].first(
                where: FileManager.default.isExecutableFile)
        else {
            Issue.record("no python3 to decode the screenshot; only its size was checked")
            return
        }
        let probe = directory.file("probe.py")
        try Data(Self.pngProbe.utf8).write(to: URL(fileURLWithPath: probe))
        let output = directory.file("probe.txt")
        let probeStatus = try Self.run(
            "/usr/bin/timeout", ["120", python, probe, pngPath], standardOutput: output)
        #expect(probeStatus == 0)
        let fields = try String(contentsOfFile: output, encoding: .utf8).split(separator: " ")
        try #require(fields.count == 4, "probe printed \(fields)")
        #expect(Int(fields[0]) == 1200 && Int(fields[1]) == 2000)
        let colours = Int(fields[2]) ?? 0
        let ink = Double(fields[3].trimmingCharacters(in: .whitespacesAndNewlines)) ?? 0
        // A blank page has one colour and no ink; text, badges and chart colours give dozens and a few percent of ink.
        #expect(colours >= 20, "only \(colours) distinct colours")
        #expect(ink > 0.01 && ink < 0.6, "ink share \(ink)")
    }

    /// Runs `path` with `arguments` to completion; the caller bounds the time with `timeout`.
    static func run(_ path: String, _ arguments: [String], standardOutput: String? = nil) throws -> Int32 {
        let process = Process()
        process.executableURL = URL(fileURLWithPath: path)
        process.arguments = arguments
        if let standardOutput {
            _ = FileManager.default.createFile(atPath: standardOutput, contents: nil)
            process.standardOutput = try FileHandle(forWritingTo: URL(fileURLWithPath: standardOutput))
        } else {
            process.standardOutput = FileHandle.nullDevice
        }
        process.standardError = FileHandle.nullDevice
        try process.run()
        process.waitUntilExit()
        return process.terminationStatus
    }
}
