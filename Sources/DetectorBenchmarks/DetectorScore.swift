public import Detector

/// How a spikes report fares against a scenario's planted causes: what was found, split, misattributed or missed,
/// and which incidents nobody planted.
public struct DetectorScore: Sendable {
    /// One planted cause and the incidents found for it.
    public struct PlantResult: Sendable {
        /// The plant.
        public var plant: LongTraffic.Plant
        /// The incidents of its (app, kind, type) that overlap it.
        public var incidents: [Incident]

        /// Whether it came out as the detector should: one incident with the expected deploy, or none for a plant
        /// that is no incident.
        public var isCorrect: Bool {
            guard plant.isIncident else { return incidents.isEmpty }
            guard incidents.count == 1, let incident = incidents.first else { return false }
            return incident.suspectDeploy.map { "\($0.service)@\($0.version)" } == plant.expectedDeploy
        }

        /// Seconds from the plant's start to the end of the first bucket that opened one of the incident's spikes:
        /// when a detector pass could first have seen it (its onset may lie earlier, in buckets held back as too
        /// small). Nil when nothing was found.
        public var delaySeconds: Int64? {
            guard let opened = incidents.flatMap({ $0.spikes.map(\.openedAt) }).min() else { return nil }
            return opened.secondsSinceEpoch + LongTraffic.bucketSeconds - plant.start.secondsSinceEpoch
        }
    }

    /// Every plant's result, in the scenario's order.
    public var plants: [PlantResult]
    /// Incidents that belong to no planted incident.
    public var falseIncidents: [Incident]
    /// App-days of traffic judged.
    public var appDays: Double

    /// Scores `report` against `traffic`'s plants; `appDays` is the number of apps times the days the report covers.
    public init(report: SpikesReport, traffic: LongTraffic, appDays: Double) {
        var claimed: Set<Int> = []
        var results: [PlantResult] = []
        for plant in traffic.plants {
            // An incident belongs to a plant when it overlaps it, or begins within the quiet stretch after it.
            let matching = report.incidents.enumerated().filter { _, incident in
                incident.appID == plant.appID && incident.kind == plant.kind
                    && incident.widgetType == plant.widgetType
                    && incident.onset.secondsSinceEpoch < plant.end.secondsSinceEpoch + 1800
                    && incident.end.secondsSinceEpoch > plant.start.secondsSinceEpoch
            }
            if plant.isIncident { claimed.formUnion(matching.map(\.offset)) }
            results.append(PlantResult(plant: plant, incidents: matching.map(\.element)))
        }
        plants = results
        falseIncidents = report.incidents.enumerated().filter { !claimed.contains($0.offset) }.map(\.element)
        self.appDays = appDays
    }

    /// False incidents per app per week.
    public var falseIncidentsPerAppWeek: Double {
        appDays > 0 ? Double(falseIncidents.count) / appDays * 7 : 0
    }
}

extension DetectorScore {
    /// Generates `traffic`, runs `detector` over every day but the first (the first is history, as a store holds
    /// before any window), and scores the report.
    public static func measure(_ traffic: LongTraffic, detector: SpikeDetector = SpikeDetector()) throws
        -> DetectorScore
    {
        let store = traffic.generate()
        let from = LongTraffic.time(day: 1, hour: 0)
        let to = LongTraffic.time(day: traffic.days, hour: 0)
        let report = try detector.report(reader: store, from: from, to: to)
        return DetectorScore(
            report: report, traffic: traffic, appDays: Double(traffic.apps.count * (traffic.days - 1)))
    }
}
