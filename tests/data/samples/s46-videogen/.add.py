import json,sys
d=json.loads(sys.stdin.read())
keys=["id","source_url","project","gpu","cuda","labels","symptoms","key_facts","resolution","confidence","host_os","shape"]
assert list(d.keys())==keys, d.keys()
with open('cases.jsonl','a') as f: f.write(json.dumps(d,ensure_ascii=False)+"\n")
print("ok",d["id"])
