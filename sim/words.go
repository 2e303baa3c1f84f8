package sim

// skillWords describes one skill for the text generator: what a task that needs it asks for
// (phrases with a %s slot for a domain noun), words that come with it, and the tools that
// perform it. Shared skills use these lists in every environment, so that tasks of different
// environments that need the same skill read alike.
type skillWords struct {
	name    string
	phrases []string
	words   []string
	tools   []string
}

// sharedSkillWords are the skills that exist in every environment's world.
var sharedSkillWords = []skillWords{
	{"dates", []string{"work out how many days remain before the %s deadline", "find the weekday of the %s date", "shift the %s date by two weeks"},
		[]string{"date", "days", "calendar", "deadline", "weekday"}, []string{"date_diff", "add_days", "parse_date"}},
	{"conversion", []string{"convert the %s price into euros", "express the %s amount in other units", "apply the exchange rate to the %s"},
		[]string{"convert", "currency", "exchange", "rate", "units"}, []string{"convert_currency", "get_exchange_rate", "convert_units"}},
	{"search", []string{"search for every %s matching the criteria", "find the %s that fits the filter", "look up a %s by keyword"},
		[]string{"search", "filter", "matching", "criteria", "keyword"}, []string{"search_items", "filter_results", "query_index"}},
	{"listing", []string{"list all %s records page by page", "collect the full list of %s entries", "go through every page of %s results"},
		[]string{"list", "page", "entries", "results", "next"}, []string{"list_records", "get_next_page"}},
	{"auth", []string{"verify the identity of the %s owner", "log in to the %s account first", "confirm the user who owns the %s"},
		[]string{"login", "verify", "identity", "account", "password"}, []string{"authenticate_user", "verify_identity", "reset_password"}},
	{"booking", []string{"reserve a %s slot", "check availability and book the %s", "cancel the existing %s reservation"},
		[]string{"book", "reserve", "reservation", "availability", "slot"}, []string{"create_booking", "check_availability", "cancel_booking"}},
	{"payment", []string{"charge the card for the %s", "refund the %s to the original payment method", "split the %s payment across two cards"},
		[]string{"pay", "payment", "card", "refund", "charge"}, []string{"process_payment", "issue_refund", "get_payment_methods"}},
	{"arithmetic", []string{"calculate the total cost of the %s", "compute the average %s value", "work out the percentage change of the %s"},
		[]string{"calculate", "total", "sum", "percent", "average"}, []string{"calculator", "compute_total", "percentage"}},
	{"files", []string{"copy the %s file into a new folder", "move the %s document to the archive directory", "create a directory for the %s"},
		[]string{"file", "directory", "copy", "move", "folder"}, []string{"ls", "cp", "mv", "mkdir"}},
	{"messaging", []string{"send a message about the %s", "email the %s summary to the team", "reply to the latest note on the %s"},
		[]string{"send", "message", "email", "notify", "reply"}, []string{"send_message", "send_email", "read_inbox"}},
	{"location", []string{"find the distance to the %s", "plan a route past the %s", "geocode the address of the %s"},
		[]string{"location", "city", "distance", "route", "address"}, []string{"geocode", "get_distance", "find_route"}},
	{"policy", []string{"check whether the %s change is allowed by policy", "decide if the %s is eligible under the rules", "refuse the %s request when the terms forbid it"},
		[]string{"policy", "allowed", "rule", "eligible", "terms"}, []string{"check_policy", "get_rules"}},
	{"planning", []string{"first inspect the %s, then act on it", "break the %s job into ordered steps", "finish the %s work in the right sequence"},
		[]string{"first", "then", "after", "finally", "steps"}, []string{"plan_steps", "create_task_list"}},
	{"inventory", []string{"check the stock of the %s", "update the quantity of the %s", "place an order to restock the %s"},
		[]string{"stock", "inventory", "quantity", "order", "item"}, []string{"check_inventory", "update_stock", "place_order"}},
	{"profile", []string{"update the address on the %s profile", "change the preferences of the %s", "read the details of the %s account"},
		[]string{"update", "profile", "change", "preference", "details"}, []string{"update_profile", "get_user_details"}},
	{"lookup", []string{"look up the %s row in the table", "query the database for the %s record", "fetch the stored %s entry"},
		[]string{"table", "record", "row", "database", "query"}, []string{"sql_query", "get_record"}},
	{"meetings", []string{"schedule a meeting about the %s", "find a free slot to discuss the %s", "invite the attendees for the %s review"},
		[]string{"meeting", "schedule", "invite", "time", "attendees"}, []string{"create_event", "find_free_slot"}},
	{"equations", []string{"solve the equation for the %s", "find the roots that describe the %s", "take the derivative of the %s curve"},
		[]string{"equation", "solve", "roots", "derivative", "integral"}, []string{"solve_equation", "compute_derivative"}},
	{"extraction", []string{"extract the fields of the %s", "summarize the %s text", "parse the %s description into parts"},
		[]string{"extract", "parse", "fields", "summary", "text"}, []string{"extract_entities", "summarize_text"}},
	{"relevance", []string{"notice that no tool fits the %s question", "decline the %s request politely", "answer the %s question without calling a tool"},
		[]string{"unrelated", "none", "cannot", "irrelevant", "decline"}, []string{"no_op"}},
	{"parallel", []string{"do the same for each %s at once", "handle both %s requests in parallel", "repeat the call for multiple %s items"},
		[]string{"each", "both", "parallel", "multiple", "simultaneously"}, []string{"batch_call", "map_call"}},
	{"recovery", []string{"retry the %s call when it fails", "recover when the %s service returns an error", "fall back to another %s source"},
		[]string{"retry", "error", "failed", "again", "fallback"}, []string{"get_status", "retry_request"}},
	{"vehicle", []string{"start the engine before moving the %s", "check the fuel level of the %s", "lock the doors of the %s"},
		[]string{"vehicle", "engine", "fuel", "drive", "doors"}, []string{"start_engine", "check_fuel", "lock_doors"}},
	{"trading", []string{"buy shares for the %s portfolio", "check the stock price of the %s", "sell the %s position at market"},
		[]string{"buy", "sell", "shares", "price", "portfolio"}, []string{"place_trade", "get_stock_price", "get_portfolio"}},
}

// envDomain describes one environment: its name stem, the nouns its tasks talk about and the
// stem of its own tool names.
type envDomain struct {
	name  string
	nouns []string
}

// envDomains are the environments of the simulated catalogue; a world with more environments
// than listed numbers the repeats.
var envDomains = []envDomain{
	{"airline", []string{"flight", "ticket", "seat", "baggage", "itinerary"}},
	{"retail", []string{"order", "parcel", "product", "return", "basket"}},
	{"telecom", []string{"plan", "line", "roaming", "bill", "device"}},
	{"banking", []string{"transfer", "loan", "statement", "deposit", "balance"}},
	{"travel", []string{"trip", "hotel", "visa", "tour", "itinerary"}},
	{"filesystem", []string{"log", "report", "archive", "backup", "script"}},
	{"brokerage", []string{"watchlist", "order", "dividend", "fund", "position"}},
	{"carcontrol", []string{"car", "cabin", "trunk", "headlight", "battery"}},
	{"chat", []string{"thread", "contact", "group", "attachment", "status"}},
	{"calendar", []string{"event", "reminder", "agenda", "holiday", "shift"}},
	{"mathtools", []string{"function", "matrix", "series", "polygon", "triangle"}},
	{"weather", []string{"forecast", "storm", "temperature", "region", "alert"}},
	{"hotel", []string{"room", "suite", "checkin", "guest", "minibar"}},
	{"food", []string{"meal", "restaurant", "delivery", "menu", "courier"}},
	{"clinic", []string{"appointment", "patient", "prescription", "referral", "doctor"}},
	{"housing", []string{"listing", "lease", "apartment", "viewing", "landlord"}},
	{"sports", []string{"match", "player", "league", "score", "season"}},
	{"music", []string{"playlist", "album", "track", "artist", "concert"}},
	{"tickets", []string{"venue", "show", "ticket", "queue", "refund"}},
	{"logistics", []string{"shipment", "warehouse", "pallet", "truck", "manifest"}},
	{"courses", []string{"course", "lecture", "grade", "assignment", "exam"}},
	{"insurance", []string{"claim", "policyholder", "premium", "coverage", "incident"}},
}

// envSkillVerbs make the phrases of environment-specific skills: "<verb> the <noun>".
var envSkillVerbs = []string{"reconcile", "escalate", "audit", "migrate", "validate", "rebalance", "renew", "triage"}

// openers start a task text.
var openers = []string{"Please", "I need you to", "Could you", "As the assistant,", "The user asks you to", "Your job:"}

// fillerWords are common words sprinkled into texts: they make similarity noisy.
var fillerWords = []string{
	"today", "quickly", "carefully", "customer", "request", "support", "help", "information", "latest",
	"new", "old", "important", "note", "team", "manager", "week", "month", "status", "detail", "option",
	"account", "number", "name", "soon", "also", "maybe", "exactly", "current", "previous", "same",
}

// constraints are clauses that make a task harder and say so: a task of complexity c carries c
// of them, so text similarity also tells something about difficulty.
var constraints = []string{
	"while keeping the total under the stated budget",
	"and double-check every field before confirming",
	"without asking the user for anything twice",
	"in a single conversation with several follow-up changes",
	"and handle the case where the first attempt is rejected",
	"making sure every earlier change is undone if a later one fails",
}
