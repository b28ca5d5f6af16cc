"""1 when the answer names the city the user asked about (or the user named none), else 0."""

CITIES = ("San Francisco", "New York", "Paris", "Tokyo")


def _text(content):
    return " ".join(part.get("text", "") for part in (content or {}).get("parts") or [])


def evaluate(instance):
    asked = _text(instance.get("prompt"))
    for turn in (instance.get("agent_data") or {}).get("turns") or []:
        for event in turn.get("events") or []:
            if event.get("author") == "user":
                asked += " " + _text(event.get("content"))
    answer = _text(instance.get("response"))
    wanted = [city for city in CITIES if city.lower() in asked.lower()]
    if not wanted:
        return {"score": 1, "explanation": "no city asked about"}
    found = [city for city in wanted if city.lower() in answer.lower()]
    return {"score": 1 if found else 0, "explanation": f"asked about {', '.join(wanted)}; named {', '.join(found) or 'none'}"}
