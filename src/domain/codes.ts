/** Coded values of decisions §4. */
export const CATEGORIES: Readonly<Record<string, string>> = {
  "000000": "Unknown", "001000": "Auto & Vehicles", "002000": "Business & Marketing", "003000": "Creative",
  "004000": "Film & Music", "005000": "Fun & Entertainment", "006000": "Hobby & Home",
  "007000": "Knowledge & Resources", "008000": "Nature & Animals", "009000": "News & Politics",
  "010000": "Nonprofits & Activism", "011000": "Religion & Philosophy", "012000": "Sports",
  "013000": "Technology & Internet", "014000": "Travel & Events", "015000": "Weird & Bizarre", "016000": "Other",
};

export const DOCUMENT_TYPES: Readonly<Record<string, string>> = {
  "000000": "Unknown", "001000": "Book", "002000": "Catalog", "003000": "Journal", "004000": "Magazine",
  "005000": "Manual & Resource", "006000": "Newspaper", "007000": "Paper", "008000": "Photo album",
  "009000": "Report", "010000": "Other",
};

/** ISO 639-1, the official two-letter codes. */
export const LANGUAGES: ReadonlySet<string> = new Set(
  ("aa ab ae af ak am an ar as av ay az ba be bg bi bm bn bo br bs ca ce ch co cr cs cu cv cy da de dv dz " +
    "ee el en eo es et eu fa ff fi fj fo fr fy ga gd gl gn gu gv ha he hi ho hr ht hu hy hz ia id ie ig ii ik " +
    "io is it iu ja jv ka kg ki kj kk kl km kn ko kr ks ku kv kw ky la lb lg li ln lo lt lu lv mg mh mi mk ml " +
    "mn mr ms mt my na nb nd ne ng nl nn no nr nv ny oc oj om or os pa pi pl ps pt qu rm rn ro ru rw sa sc sd " +
    "se sg si sk sl sm sn so sq sr ss st su sv sw ta te tg th ti tk tl tn to tr ts tt tw ty ug uk ur uz ve vi " +
    "vo wa wo xh yi yo za zh zu").split(" "),
);
