print("flowmeter-bench")
