print("flowmeter")
